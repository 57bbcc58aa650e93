"""`compile_apart`: a model's graph prepared in a child process, so that the process which
will run it never imports the ONNX library.

Preparing a graph (the embedder's compact rebuild, `session.compile_encoder`; a judge's exact
integer weights, `onnx_graph.prepared_in_process`) imports the ONNX library, which holds the
interpreter's lock for 0.5-1 s, and a served process's requests waited behind it: on a start
with an empty graph cache, and at the first session every start read (docs/benchmarks.md). A
child holds a lock of its own, and what it prepares is kept in a graph cache for later starts.

The exchange: the parent starts `python -m` this module with what to prepare as one JSON
argument, writes the model's bytes to the child's stdin, and reads one JSON header line and the
graph from its stdout. It keeps stdin open until it has read them: the child takes end of file
as its parent's death and exits, so a killed server leaves no child running. Whatever goes
wrong with the child (it cannot start, fails, runs past its time, answers what does not check)
is logged by its kind and gives None, and the caller prepares in process, as without a child.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import structlog

from factledger.adapters.embedding.onnx.graph_cache import CompiledGraph, graph_header, graph_of

log = structlog.get_logger(__name__)

# What a child can prepare: a function (model bytes, options) -> CompiledGraph, by name, so
# that this module imports none of them.
PREPARATIONS = {
    "encoder": "factledger.adapters.embedding.onnx.session:compiled_in_child",
    "exact_weights": "factledger.adapters.judgement.onnx_graph:prepared_in_process",
}
# A preparation takes about a second here; a child still busy after this long is stuck, or the
# machine is too loaded for it to matter where the graph is prepared.
TIMEOUT_S = 120.0
PARENT_GONE_EXIT = 70  # the child's exit status when its stdin closes before it has answered


def child_command() -> list[str]:
    """This interpreter running this module, with no current directory on its path (`-P`): a
    served process's working directory is the user's, not the package's."""
    return [sys.executable, "-P", "-m", __name__]


def compile_apart(
    serialized: bytes,
    kind: str,
    options: Mapping[str, object] | None = None,
    *,
    timeout_s: float = TIMEOUT_S,
    command: Sequence[str] | None = None,
) -> CompiledGraph | None:
    """The graph the preparation `kind` makes of `serialized` with `options`, made by a child
    process; None when the child could not give it. `command` starts the child (tests start
    others)."""
    started = time.monotonic()
    request = {"kind": kind, "size": len(serialized), "options": dict(options or {})}
    argv = [*(command if command is not None else child_command()), json.dumps(request)]
    if not argv[0]:  # an embedded interpreter may not know its executable
        return _failed(kind, "no_interpreter")
    try:
        with tempfile.TemporaryFile() as errors:
            # A session of its own: a terminal's Ctrl-C, sent to the server's process group,
            # must not fail the child into a second preparation in process while the server
            # stops; the server's end closes the child's stdin, which ends it.
            child = subprocess.Popen(  # noqa: S603 - our interpreter and module, no shell
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
            )
            answer, timed_out = _exchange(child, serialized, timeout_s)
            errors.seek(0)
            error_type = _last_error_type(errors.read())
    except OSError as exc:  # no process could start, or a full disk for its error output
        return _failed(kind, "unstarted", error=type(exc).__name__)
    if timed_out:
        return _failed(kind, "timeout", timeout_s=timeout_s)
    if child.returncode != 0:
        return _failed(kind, "exit", exit_code=child.returncode, error=error_type)
    graph = _checked(kind, answer)
    if graph is not None:
        # A first start's slower requests are explained by this line: what was prepared, and
        # how long the child took.
        log.info(
            "model.compiled_apart", preparation=kind, seconds=round(time.monotonic() - started, 3)
        )
    return graph


def _exchange(
    child: subprocess.Popen[bytes], serialized: bytes, timeout_s: float
) -> tuple[bytes, bool]:
    """The child's whole stdout, and whether it was killed for running past `timeout_s`."""
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        child.kill()

    stdin, stdout = child.stdin, child.stdout
    if stdin is None or stdout is None:  # never with pipes asked for; an OSError for callers
        raise OSError("the child has no pipes")
    timer = threading.Timer(timeout_s, kill)
    timer.daemon = True  # a process that stops while a child prepares must not wait for it
    timer.start()
    try:
        # A child that died before reading the model breaks the pipe; its status says why.
        with contextlib.suppress(BrokenPipeError):
            stdin.write(serialized)
            stdin.flush()
        answer = stdout.read()
    finally:
        timer.cancel()
        for stream in (stdin, stdout):
            with contextlib.suppress(BrokenPipeError):
                stream.close()
        child.wait()
    return answer, killed.is_set()


def _checked(kind: str, answer: bytes) -> CompiledGraph | None:
    """The graph the child wrote, if its header parses and its payload hashes to it."""
    end = answer.find(b"\n")
    try:
        header = json.loads(answer[:end]) if end >= 0 else None
    except ValueError:
        header = None
    if not isinstance(header, dict):
        return _failed(kind, "unreadable_answer")
    graph = graph_of(answer[end + 1 :], header)
    return graph if graph is not None else _failed(kind, "corrupt_answer")


def _last_error_type(stderr: bytes) -> str | None:
    """The exception type of a traceback's last line ("ValueError: ..."), never its message,
    which logs do not carry."""
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        return None
    name = lines[-1].split(":", 1)[0].strip()
    return name.rsplit(".", 1)[-1] if name.replace(".", "").replace("_", "").isalnum() else None


def _failed(kind: str, reason: str, **fields: object) -> CompiledGraph | None:
    """None, the answer of a child that gave no graph, once logged by its kind."""
    log.warning("model.compile_apart_failed", preparation=kind, reason=reason, **fields)
    return None


def _read_exactly(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    remaining = size
    while remaining > 0:
        part = os.read(fd, min(remaining, 1 << 20))
        if not part:
            raise EOFError(f"the model ended {remaining} bytes short")
        parts.append(part)
        remaining -= len(part)
    return b"".join(parts)


def _exit_when_parent_gone(fd: int) -> None:
    """Nothing more is written to stdin: end of file means the parent closed it or died. Read
    from the descriptor, not `sys.stdin`, whose lock a daemon thread must not hold at exit."""
    while os.read(fd, 1 << 16):
        pass
    os._exit(PARENT_GONE_EXIT)


def _preparation(kind: str) -> Callable[[bytes, Mapping[str, Any]], CompiledGraph]:
    module, _, name = PREPARATIONS[kind].partition(":")
    prepare: Callable[[bytes, Mapping[str, Any]], CompiledGraph] = getattr(
        importlib.import_module(module), name
    )
    return prepare


def main(argv: Sequence[str]) -> int:
    """The child: reads the model from stdin before anything slow is imported, watches stdin
    for its parent's end, prepares and writes the header line and the graph to stdout."""
    request = json.loads(argv[0])
    stdin = sys.stdin.fileno()
    model = _read_exactly(stdin, int(request["size"]))
    threading.Thread(target=_exit_when_parent_gone, args=(stdin,), daemon=True).start()
    graph = _preparation(request["kind"])(model, request["options"])
    out = sys.stdout.buffer
    out.write(json.dumps(graph_header(graph)).encode() + b"\n")
    out.write(graph.serialized)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
