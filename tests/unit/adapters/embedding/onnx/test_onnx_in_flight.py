"""Texts being embedded by one caller are waited for by another, not run twice."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.in_flight import InFlightTexts
from factledger.adapters.embedding.onnx.vector_cache import text_key

SAID_TWICE = "preference: prefers to be called in the morning"
SAID_ONCE = "supplier: works with a flour mill near the harbour"


@pytest.fixture(scope="module")
def uncached() -> OnnxEmbedder:
    return OnnxEmbedder(cached_vectors=0)


def _until(condition: Callable[[], bool]) -> None:
    """Waits (bounded) for another thread to reach a state; not a timing assertion."""
    deadline = time.monotonic() + 30.0
    while not condition():
        assert time.monotonic() < deadline, "the other caller never got there"
        time.sleep(0.001)


def test_a_claimed_text_is_theirs_for_every_later_caller_until_settled() -> None:
    texts = InFlightTexts()
    a, b = text_key("a"), text_key("b")

    first = texts.claim([a])
    second = texts.claim([a, b])

    assert first.mine == [a]
    assert second.mine == [b]
    assert set(second.theirs) == {a}
    texts.settle({a: np.ones(3, dtype=np.float32)})
    assert np.array_equal(second.theirs[a].result(timeout=0), np.ones(3))
    assert texts.claim([a]).mine == [a]  # released: the next caller runs it (or finds it cached)


def test_a_failed_run_hands_its_error_to_the_waiters_and_releases_its_texts() -> None:
    texts = InFlightTexts()
    a = text_key("a")
    texts.claim([a])
    waiting = texts.claim([a]).theirs[a]

    texts.fail([a], RuntimeError("model gone"))

    with pytest.raises(RuntimeError, match="model gone"):
        waiting.result(timeout=0)
    assert len(texts) == 0


def test_a_text_another_call_is_running_is_waited_for_and_keeps_its_vector(
    uncached: OnnxEmbedder,
) -> None:
    # Given another caller running SAID_TWICE (the test plays it)
    alone = {text: uncached.embed_sync([text])[0] for text in (SAID_TWICE, SAID_ONCE)}
    embedder = OnnxEmbedder()
    other = embedder.in_flight.claim([text_key(SAID_TWICE)])
    got: list[np.ndarray] = []
    caller = threading.Thread(
        target=lambda: got.append(embedder.embed_sync([SAID_ONCE, SAID_TWICE]))
    )

    # When a call needs both texts while that run is under way, and the run then finishes
    caller.start()
    _until(lambda: embedder.in_flight.shared == 1)
    embedder.in_flight.settle({other.mine[0]: alone[SAID_TWICE]})
    caller.join(timeout=30)

    # Then it ran only its other text and got both vectors bit for bit
    assert np.array_equal(got[0], np.stack([alone[SAID_ONCE], alone[SAID_TWICE]]))
    assert set(embedder.vectors.get_many([text_key(SAID_ONCE), text_key(SAID_TWICE)])) == {
        text_key(SAID_ONCE)
    }
    assert len(embedder.in_flight) == 0


def test_a_call_waiting_on_a_failed_run_gets_its_error(uncached: OnnxEmbedder) -> None:
    embedder = OnnxEmbedder()
    embedder.in_flight.claim([text_key(SAID_TWICE)])
    errors: list[BaseException] = []

    def call() -> None:
        try:
            embedder.embed_sync([SAID_TWICE])
        except RuntimeError as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    _until(lambda: embedder.in_flight.shared == 1)
    embedder.in_flight.fail([text_key(SAID_TWICE)], RuntimeError("run failed"))
    caller.join(timeout=30)

    assert [str(error) for error in errors] == ["run failed"]
