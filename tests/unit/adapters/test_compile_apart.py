"""A graph prepared by a child process (`compile_apart`) is the graph prepared in process; a
child that cannot give it costs a logged reason and a preparation in process, never a hang, a
wrong graph or a message in the logs; a child whose parent is gone stops; and once a graph is
in the cache, a process reads it back without importing the ONNX library."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import structlog

from factledger.adapters import compile_apart as apart
from factledger.adapters.embedding.onnx import session as onnx_session
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.graph_cache import CompiledGraph
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement import onnx_graph
from factledger.adapters.judgement.cross_answers import CrossEncoderIntegrityError, metadata_of
from factledger.adapters.judgement.forget_reader import PACKAGED_FORGET_READER

TEXTS = ["We now buy our flour from Zorblax.", "Call me in the morning, please."]
SECRET = "the admin password is hunter2"  # what a failing child prints; logs must not carry it


@pytest.fixture(scope="module")
def model() -> bytes:
    return OnnxModelFiles.preset(DEFAULT_PRESET).model.read_bytes()


def _python(code: str) -> list[str]:
    """A child that runs `code` (the options come after it, as `sys.argv[1]`)."""
    return [sys.executable, "-c", code]


def _encoder_options(*, int8_activations: bool = True, trusted: bool = True) -> dict[str, object]:
    return {"int8_activations": int8_activations, "trusted": trusted, "threads": 1}


def _apart(model: bytes, command: Sequence[str], timeout_s: float = 60.0) -> CompiledGraph | None:
    return apart.compile_apart(
        model, "encoder", _encoder_options(), timeout_s=timeout_s, command=command
    )


def _in_process(model: bytes, *, int8_activations: bool, trusted: bool) -> CompiledGraph:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return onnx_session.compile_encoder(
        model, options, int8_activations=int8_activations, trusted=trusted
    )


@pytest.mark.parametrize(
    ("int8_activations", "trusted"),
    [(True, True), (False, False)],
    ids=["int8-trusted", "float-probed"],
)
def test_the_childs_graph_is_the_graph_compiled_in_process(
    model: bytes, int8_activations: bool, trusted: bool
) -> None:
    asked = _encoder_options(int8_activations=int8_activations, trusted=trusted)
    with structlog.testing.capture_logs() as logs:
        child = apart.compile_apart(model, "encoder", asked)

    expected = _in_process(model, int8_activations=int8_activations, trusted=trusted)
    assert child is not None
    assert hashlib.sha256(child.serialized).digest() == hashlib.sha256(expected.serialized).digest()
    assert (child.int8_activations, child.compact) == (expected.int8_activations, expected.compact)
    done = [e for e in logs if e["event"] == "model.compiled_apart"]
    assert [e["preparation"] for e in done] == ["encoder"]
    assert done[0]["seconds"] > 0


@pytest.mark.parametrize(
    ("command", "logged"),
    [
        (["/nonexistent/python"], {"reason": "unstarted", "error": "FileNotFoundError"}),
        (
            _python(f"raise ValueError({SECRET!r})"),
            {"reason": "exit", "exit_code": 1, "error": "ValueError"},
        ),
        (_python("import sys; sys.exit(0)"), {"reason": "unreadable_answer"}),
        (
            _python("import sys; sys.stdout.write('not json\\n' + 'x' * 100)"),
            {"reason": "unreadable_answer"},
        ),
        (
            _python(
                "import json, sys; sys.stdin.buffer.read(json.loads(sys.argv[1])['size']);"
                " sys.stdout.write(json.dumps({'sha256': '0' * 64}) + '\\n' + 'graph')"
            ),
            {"reason": "corrupt_answer"},
        ),
    ],
    ids=["cannot-start", "fails", "says-nothing", "not-a-header", "payload-not-its-hash"],
)
def test_a_child_that_cannot_give_the_graph_gives_none_and_its_reason(
    model: bytes, command: list[str], logged: dict[str, object]
) -> None:
    with structlog.testing.capture_logs() as logs:
        assert _apart(model, command) is None

    failures = [e for e in logs if e["event"] == "model.compile_apart_failed"]
    assert len(failures) == 1
    assert logged.items() <= failures[0].items()
    assert SECRET not in json.dumps(failures, default=str)


def test_a_full_disk_costs_the_child_not_the_graph(
    model: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child's error output goes to a temporary file: with no room for it the child is
    not started, and the caller prepares in process."""

    def no_room(*_args: object, **_kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(apart.tempfile, "TemporaryFile", no_room)

    with structlog.testing.capture_logs() as logs:
        assert _apart(model, apart.child_command()) is None

    failures = [e for e in logs if e["event"] == "model.compile_apart_failed"]
    assert [(e["reason"], e["error"]) for e in failures] == [("unstarted", "OSError")]


def test_the_child_runs_in_a_session_of_its_own(model: bytes) -> None:
    """Out of the server's process group: a terminal's Ctrl-C reaches the server only."""
    says_its_session = _python(
        "import hashlib, json, os, sys\n"
        "sys.stdin.buffer.read(json.loads(sys.argv[1])['size'])\n"
        "leader = str(os.getsid(0) == os.getpid())\n"
        "header = {'metadata': {'leader': leader}, 'sha256': hashlib.sha256(b'').hexdigest()}\n"
        "sys.stdout.write(json.dumps(header) + '\\n')"
    )

    answer = _apart(model, says_its_session)

    assert answer is not None
    assert answer.metadata == {"leader": "True"}


def test_a_child_that_runs_past_its_time_is_killed(model: bytes) -> None:
    command = _python("import time; time.sleep(600)")  # never reads its model

    with structlog.testing.capture_logs() as logs:
        assert _apart(model, command, timeout_s=0.5) is None

    assert [e["reason"] for e in logs if e["event"] == "model.compile_apart_failed"] == ["timeout"]


def test_a_child_whose_parent_is_gone_stops(model: bytes) -> None:
    """A killed server's pipes close: the child reads end of file and exits, unfinished."""
    request = {"kind": "encoder", "size": len(model), "options": _encoder_options()}
    child = subprocess.Popen(  # noqa: S603 - our interpreter and module
        [*apart.child_command(), json.dumps(request)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    child.stdin.write(model)
    child.stdin.close()  # what the kernel does when the parent dies

    assert child.wait(timeout=60) == apart.PARENT_GONE_EXIT
    assert child.stdout.read() == b""  # it wrote no graph
    child.stdout.close()


STOPS_WHILE_A_CHILD_PREPARES = """
import subprocess, sys, threading, time
from factledger.adapters import compile_apart as apart

hung = [sys.executable, "-c", "import time; time.sleep(600)"]
threading.Thread(
    target=apart.compile_apart,
    args=(b"model", "encoder"),
    kwargs={"timeout_s": 600.0, "command": hung},
    daemon=True,
).start()
time.sleep(0.5)
print(subprocess.run(["pgrep", "-f", "time.sleep.600."], capture_output=True, text=True).stdout)
"""


def test_a_process_that_stops_while_a_child_prepares_is_not_held_by_the_exchange() -> None:
    """A process stopping while its child prepares exits: the exchange's timer does not keep
    it alive until the child's time runs out. (The packaged child then reads end of file on
    its stdin and exits: `test_a_child_whose_parent_is_gone_stops`; this one is a stand-in
    that hangs, so the test ends it.)"""
    done = subprocess.run(  # noqa: S603 - our interpreter
        [sys.executable, "-c", STOPS_WHILE_A_CHILD_PREPARES],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,  # a timer that held the process would hold it for 600 s
    )
    children = [int(pid) for pid in done.stdout.split()]
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

    assert done.returncode == 0, done.stderr[-2000:]
    assert children  # the child was still running when the process stopped


class _InProcessCompiles:
    """Counts the compiles `open_encoder` runs in this process."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        compile_encoder = onnx_session.compile_encoder

        def counted(*args: object, **kwargs: object) -> CompiledGraph:
            self.calls += 1
            return compile_encoder(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(onnx_session, "compile_encoder", counted)


def test_a_background_load_compiles_in_a_child_and_embeds_as_a_load_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = OnnxModelFiles.preset(DEFAULT_PRESET)
    in_process = _InProcessCompiles(monkeypatch)

    background = OnnxEmbedder(
        files, cache_dir=tmp_path / "graphs", cached_vectors=0, load_in_background=True
    )
    vectors = background.embed_sync(TEXTS)

    assert in_process.calls == 0
    assert len(list((tmp_path / "graphs").iterdir())) == 1  # kept for the next start
    eager = OnnxEmbedder(files, cache_dir=tmp_path / "eager", cached_vectors=0)
    assert in_process.calls == 1
    assert np.array_equal(vectors, eager.embed_sync(TEXTS))


def test_a_background_load_whose_child_fails_compiles_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_process = _InProcessCompiles(monkeypatch)
    monkeypatch.setattr(apart, "child_command", lambda: _python("import sys; sys.exit(3)"))
    files = OnnxModelFiles.preset(DEFAULT_PRESET)

    with structlog.testing.capture_logs() as logs:
        embedder = OnnxEmbedder(
            files, cache_dir=tmp_path / "graphs", cached_vectors=0, load_in_background=True
        )
        vectors = embedder.embed_sync(TEXTS)

    assert in_process.calls == 1
    assert [e.get("exit_code") for e in logs if e["event"] == "model.compile_apart_failed"] == [3]
    expected = OnnxEmbedder(files, cached_vectors=0).embed_sync(TEXTS)
    assert np.array_equal(vectors, expected)


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The judges' graph cache (`$XDG_CACHE_HOME/factledger/onnx`), empty."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "factledger" / "onnx"


def test_a_judges_graph_prepared_by_a_child_is_the_one_prepared_in_process(
    empty_cache: Path,
) -> None:
    model = PACKAGED_FORGET_READER.read_bytes()

    prepared = onnx_graph.prepared_graph(model)

    expected = onnx_graph.prepared_in_process(model, {})
    assert prepared.serialized == expected.serialized
    assert prepared.serialized != model  # its int8 weights moved
    assert dict(prepared.metadata) == dict(expected.metadata)
    assert {"classes", "yes_min"} <= prepared.metadata.keys()
    assert len(list(empty_cache.iterdir())) == 1


def test_a_judges_prepared_graph_is_read_back_from_the_cache_without_a_child(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = PACKAGED_FORGET_READER.read_bytes()
    first = onnx_graph.prepared_graph(model)
    monkeypatch.setattr(apart, "child_command", lambda: ["/nonexistent/python"])

    with structlog.testing.capture_logs() as logs:
        again = onnx_graph.prepared_graph(model)

    assert again == first
    assert not [e for e in logs if e["event"] == "model.compile_apart_failed"]


def test_a_judges_graph_whose_child_fails_is_prepared_in_process(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = PACKAGED_FORGET_READER.read_bytes()
    monkeypatch.setattr(apart, "child_command", lambda: _python("import sys; sys.exit(3)"))

    with structlog.testing.capture_logs() as logs:
        prepared = onnx_graph.prepared_graph(model)

    assert prepared == onnx_graph.prepared_in_process(model, {})
    failures = [e for e in logs if e["event"] == "model.compile_apart_failed"]
    assert [(e["preparation"], e["exit_code"]) for e in failures] == [("exact_weights", 3)]


def test_a_cache_that_cannot_keep_a_judges_graph_costs_one_child_for_its_metadata_and_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only or missing home: the verifier reads its metadata, then builds its session
    from the same file, and the graph prepared for the first is taken by the second."""
    (tmp_path / "a-file").write_bytes(b"")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file" / "cache"))  # never a directory
    model = PACKAGED_FORGET_READER.read_bytes()

    with structlog.testing.capture_logs() as logs:
        assert "yes_min" in metadata_of(model)
        assert onnx_graph.one_thread_session(model).get_inputs()
        assert onnx_graph.one_thread_session(model).get_inputs()  # taken once: prepared again

    prepared = [e for e in logs if e["event"] == "model.compiled_apart"]
    assert len(prepared) == 2


def test_a_file_that_is_no_graph_is_refused_as_before(empty_cache: Path) -> None:
    with pytest.raises(CrossEncoderIntegrityError, match="not an ONNX model"):
        metadata_of(b"\x00\x01 this is not a serialized graph")
    assert not empty_cache.exists() or not list(empty_cache.iterdir())


READ_BACK = """
import sys
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.judgement.cross_answers import metadata_of
from factledger.adapters.judgement.forget_reader import PACKAGED_FORGET_READER
from factledger.adapters.judgement.onnx_graph import one_thread_session
from factledger.adapters.judgement.qa_reader.reader import PACKAGED_QA_READER

embedder = OnnxEmbedder(cache_dir=__import__("pathlib").Path(sys.argv[1]), load_in_background=True)
assert embedder.embed_sync(["a probe"]).shape == (1, embedder.dimension)
assert "yes_min" in metadata_of(PACKAGED_FORGET_READER.read_bytes())
assert one_thread_session(PACKAGED_QA_READER.read_bytes()).get_inputs()
print(sorted(name for name in sys.modules if name == "onnx" or name.startswith("onnx.")))
"""


def test_a_process_that_finds_its_graphs_in_the_cache_never_imports_the_onnx_library(
    empty_cache: Path, tmp_path: Path
) -> None:
    """What a served process does at every start after the first: the embedder's graph, a
    judge's metadata and a judge's session, all read back from the cache."""
    graphs = tmp_path / "graphs"
    for run in ("fills the cache", "reads it back"):
        done = subprocess.run(  # noqa: S603 - our interpreter
            [sys.executable, "-c", READ_BACK, str(graphs)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert done.returncode == 0, (run, done.stderr[-2000:])
        # The last line: structlog's default logger prints to stdout before it.
        assert done.stdout.strip().splitlines()[-1] == "[]", run  # neither time in the process
