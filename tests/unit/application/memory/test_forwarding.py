"""`ForwardingMemoryBackend` hands every port call, with all its arguments, to the inner
backend; wrappers built on it unwrap to the adapter whatever their order."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

import pytest

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.application.memory.calibration import Calibration
from factledger.application.memory.forwarding import ForwardingMemoryBackend, innermost_backend
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.validating import ValidatingMemoryBackend
from factledger.testing.manual_clock import ManualClock
from factledger.testing.scripted_extractor import ScriptedExtractor
from factledger.testing.stalling_backend import Fault, StallingBackend

PORT_METHODS = sorted(
    name
    for name, member in vars(MemoryBackend).items()
    if inspect.iscoroutinefunction(member) and not name.startswith("_")
)
# The port declares these `-> None`; the forwarder awaits them without passing a value on.
_RETURNS_NOTHING = {"put_record", "expire", "drop_namespace", "close"}


class RecordingInner:
    """Answers any call with a token naming it, and notes each call's arguments."""

    name = "recording"
    capabilities: frozenset[Any] = frozenset()

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, method: str) -> Callable[..., Any]:
        async def call(*args: Any, **kwargs: Any) -> str:
            self.calls.append((method, args, kwargs))
            return f"answer of {method}"

        return call


def bound(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments by parameter name, as the port's signature reads them."""
    signature = inspect.signature(getattr(MemoryBackend, method))
    arguments = signature.bind(None, *args, **kwargs)
    arguments.apply_defaults()
    return {k: v for k, v in arguments.arguments.items() if k != "self"}


def distinct_arguments(method: str) -> tuple[list[object], dict[str, object]]:
    """One distinct token per parameter, positional or keyword as the port declares it."""
    args: list[object] = []
    kwargs: dict[str, object] = {}
    parameters = list(inspect.signature(getattr(MemoryBackend, method)).parameters.values())
    for p in parameters[1:]:
        if p.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[p.name] = f"token for {p.name}"
        else:
            args.append(f"token for {p.name}")
    return args, kwargs


def test_the_port_has_methods_to_forward() -> None:
    assert {"search", "put_record", "forget", "close"} <= set(PORT_METHODS)


@pytest.mark.parametrize("method", PORT_METHODS)
async def test_every_port_call_reaches_the_inner_backend_with_every_argument(method: str) -> None:
    inner = RecordingInner()
    backend = ForwardingMemoryBackend(cast("MemoryBackend", inner))
    args, kwargs = distinct_arguments(method)

    answer = await getattr(backend, method)(*args, **kwargs)

    [(called, called_args, called_kwargs)] = inner.calls
    assert called == method
    assert bound(method, called_args, called_kwargs) == bound(method, tuple(args), kwargs)
    assert answer == (None if method in _RETURNS_NOTHING else f"answer of {method}")


def test_a_forwarder_shows_the_inner_name_and_capabilities() -> None:
    inner = RecordingInner()
    backend = ForwardingMemoryBackend(cast("MemoryBackend", inner))
    assert (backend.name, backend.capabilities) == ("recording", frozenset())


def test_the_adapter_is_found_behind_any_stack_of_wrappers() -> None:
    adapter = InMemoryMemoryBackend(
        extractor=ScriptedExtractor(), embedder=HashingEmbedder(64), clock=ManualClock()
    )
    # The composition root's order: calibration on the adapter, validation outermost; an
    # operator command (ANN maintenance) must still reach the adapter beneath both.
    stacked = ValidatingMemoryBackend(
        CalibratedMemoryBackend(adapter, Calibration(slope=10.0, intercept=-5.0))
    )
    assert innermost_backend(stacked) is adapter
    assert innermost_backend(StallingBackend(stacked, fault=Fault.NONE)) is adapter
    assert innermost_backend(adapter) is adapter
