"""What a start leaves for later (the models' loads, some libraries' imports) begins once the
process has answered a ready `/readyz`, after the answer, or after a fallback delay when no
probe asks; once per process. What only rarer requests need (the answer readers' members,
the MCP SDK) waits until what a first message needs has loaded."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest
from support.api_harness import TEST_AUTH

from factledger.adapters.judgement.tuned_answers_file import (
    TunedAnswers,
    TunedAnswersIntegrityError,
)
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.api.bootstrap import deferred_imports, judgement, warmup
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.http.app import create_app


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(warmup, "_STARTED", threading.Event())
    monkeypatch.setattr(warmup, "one_blas_thread", lambda: calls.append("blas"))
    monkeypatch.setattr(warmup, "start_deferred_loads", lambda: calls.append("loads"))
    monkeypatch.setattr(warmup, "start_deferred_imports", lambda: calls.append("imports"))
    monkeypatch.setattr(warmup, "start_answer_unpack", lambda *_: calls.append("unpack"))
    return calls


def test_the_warm_up_starts_once(started: list[str]) -> None:
    warmup.start_after_ready()
    warmup.start_after_ready()
    assert started == ["blas", "loads", "imports", "unpack"]


async def test_a_ready_answer_starts_the_warm_up_and_a_starting_one_does_not(
    runtime: Runtime, started: list[str]
) -> None:
    starting = httpx.ASGITransport(app=create_app(ports=None, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=starting, base_url="http://api") as http:
        assert (await http.get("/readyz")).status_code == 503
    assert started == []
    transport = httpx.ASGITransport(app=create_app(ports=runtime, auth=TEST_AUTH))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        assert (await http.get("/readyz")).status_code == 200
        assert (await http.get("/readyz")).status_code == 200
    assert started == ["blas", "loads", "imports", "unpack"]


async def test_a_process_no_probe_asks_warms_up_after_the_fallback_delay(
    started: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warmup, "FALLBACK_S", 0.01)
    handle = warmup.schedule_fallback()
    await asyncio.sleep(0.1)
    assert started == ["blas", "loads", "imports", "unpack"]
    handle.cancel()


def test_a_worker_warms_up_to_the_end_before_its_first_item_and_only_once(
    monkeypatch: pytest.MonkeyPatch, started: list[str]
) -> None:
    monkeypatch.setattr(warmup, "finish_deferred_loads", lambda: started.append("loaded"))
    monkeypatch.setattr(warmup, "import_deferred", lambda: started.append("imported"))
    monkeypatch.setattr(warmup, "unpack_answers_now", lambda: started.append("unpacked"))
    monkeypatch.setattr(warmup, "build_first_use_graphs", lambda: started.append("built"))
    warmup.warm_up_now()
    warmup.start_after_ready()  # the fallback's turn, later: nothing left to start
    assert started == ["blas", "loaded", "imported", "unpacked", "built"]


def test_a_served_process_leaves_the_graphs_built_at_first_use_to_their_first_use(
    monkeypatch: pytest.MonkeyPatch, started: list[str]
) -> None:
    monkeypatch.setattr(warmup, "build_first_use_graphs", lambda: started.append("built"))
    warmup.start_after_ready()
    assert "built" not in started


def test_the_deferred_imports_also_read_the_keyword_lexicons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []
    monkeypatch.setattr(deferred_imports, "load_lexicons", lambda: read.append("lexicons"))
    deferred_imports.import_deferred(())
    assert read == ["lexicons"]


def test_the_warm_up_unpacks_the_tuned_answer_readers_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(judgement, "_TUNED", [])
    made = judgement.pair_answers.__wrapped__()  # a reader of its own, not the process's
    assert isinstance(made, TunedUseAnswerJudge)
    assert callable(made._tuned)  # packed until its first reply or the warm-up
    warmup.unpack_answers_now()
    assert isinstance(made._tuned, TunedAnswers)


def test_a_file_that_cannot_be_unpacked_is_left_to_the_first_reply(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken() -> TunedAnswers:
        raise TunedAnswersIntegrityError("answer-tuned-use.npz: not a tuned answer file")

    reader = TunedUseAnswerJudge(broken)
    monkeypatch.setattr(judgement, "_TUNED", [reader])
    warmup.unpack_answers_now()  # logged, not raised on the warm-up's thread
    with pytest.raises(TunedAnswersIntegrityError):
        reader.unpack()


def test_the_answer_readers_unpack_once_the_loads_and_imports_have_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from factledger.adapters.deferred_load import DeferredLoad

    monkeypatch.setattr(warmup, "_REQUEST_PATH_SETTLED", threading.Event())
    unpacked = threading.Event()
    monkeypatch.setattr(warmup, "unpack_answers_now", unpacked.set)
    release = threading.Event()
    load = DeferredLoad(lambda: release.wait(10), name="slow")
    load.start()
    imports = threading.Thread(target=lambda: None)
    imports.start()
    warmup.start_answer_unpack([load], imports)
    assert not unpacked.wait(0.3)
    assert not warmup._REQUEST_PATH_SETTLED.is_set()
    release.set()
    assert unpacked.wait(10)
    assert warmup._REQUEST_PATH_SETTLED.is_set()


def test_a_failed_load_settles_the_request_path_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from factledger.adapters.deferred_load import DeferredLoad

    monkeypatch.setattr(warmup, "_REQUEST_PATH_SETTLED", threading.Event())
    monkeypatch.setattr(warmup, "unpack_answers_now", lambda: None)

    def fail() -> None:
        raise OSError("unreadable")

    load = DeferredLoad(fail, name="broken")
    load.start()
    warmup.start_answer_unpack([load])
    assert warmup._REQUEST_PATH_SETTLED.wait(10)


async def test_what_waits_for_the_request_path_returns_once_it_has_settled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settled = threading.Event()
    monkeypatch.setattr(warmup, "_REQUEST_PATH_SETTLED", settled)
    waiting = asyncio.ensure_future(warmup.request_path_settled())
    await asyncio.sleep(0.2)
    assert not waiting.done()
    settled.set()
    await asyncio.wait_for(waiting, 10)


async def test_what_waits_for_the_request_path_waits_a_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(warmup, "_REQUEST_PATH_SETTLED", threading.Event())
    monkeypatch.setattr(warmup, "REQUEST_PATH_WAIT_S", 0.2)
    await asyncio.wait_for(warmup.request_path_settled(), 10)
