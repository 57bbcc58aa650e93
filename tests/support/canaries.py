"""Canary text and fault injection, to prove that no log ever carries what a person said.

- `explode` raises a `RuntimeError` whose message carries `CANARY_MESSAGE`, from a frame holding
  `CANARY_LOCAL` in a local variable: a log line that prints either has leaked.
- `Bomb` wraps any port; while its switch is armed, every method call explodes.
- `arm_register_fault` makes `Ledger.register_subject` explode, for a real `factledger serve`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from factledger.application.ledger.ledger import Ledger

CANARY_MESSAGE = "canary-message-7f3a"
CANARY_LOCAL = "canary-local-9b1c"
CANARY_BODY = "canary-body-4e2d"  # put in request bodies: route frames hold it in locals
CANARIES = (CANARY_MESSAGE, CANARY_LOCAL, CANARY_BODY)


def explode(where: str) -> None:
    held_transcript = f"{CANARY_LOCAL} said by the subject"  # what a traceback with locals shows
    raise RuntimeError(f"{CANARY_MESSAGE} from {where}: {held_transcript}")


def hits(text: str) -> list[str]:
    """The canaries found in `text`."""
    return [canary for canary in CANARIES if canary in text]


class Switch:
    """Which wrapped port explodes now (one at a time; none when `armed` is None)."""

    def __init__(self) -> None:
        self.armed: str | None = None


class Bomb:
    """Delegates every attribute to `inner`; while `switch.armed == name`, calling any method
    raises from `explode` instead."""

    def __init__(self, name: str, inner: object, switch: Switch) -> None:
        self._name, self._inner, self._switch = name, inner, switch

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._inner, attribute)
        if not callable(value):
            return value

        def maybe_explode(*args: Any, **kwargs: Any) -> Any:
            if self._switch.armed == self._name:
                explode(f"{self._name}.{attribute}")
            return value(*args, **kwargs)

        return maybe_explode


def arm_register_fault() -> None:
    """Every `register_subject` explodes (with the caller's input in the frame's locals)."""
    original: Callable[..., Any] = Ledger.register_subject

    def register_subject(self: Ledger, *args: Any, **kwargs: Any) -> Any:
        explode("register_subject")
        return original(self, *args, **kwargs)

    Ledger.register_subject = register_subject  # type: ignore[method-assign]
