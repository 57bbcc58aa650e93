"""Cold start of `factledger serve`: from launch to the first 200 on `/readyz`, on loopback,
and, given a token, to a first served request (`GET /v1/whoami`) right after it.

Each start gets a fresh data directory and a free loopback port; a contender's graph cache
lives in the bench's own folder, so its first start fills it and the others read it, and the
user's cache is never touched. Besides the wall-clock seconds, which wait for the CPU on a
loaded machine, each start reports the serve process's own CPU seconds up to ready (Linux's
`/proc`; None elsewhere), which a busy machine inflates far less. Any `factledger`
executable can be timed beside this one, so an older install gives the figures to compare
with in the same run.

Ready is not yet served: a process may answer `/readyz` before it has loaded what a request
needs (its routes, ADR 0095; its models, ADR 0085). So with a bearer token the bench sends an
authenticated `GET /v1/whoami` the moment `/readyz` says 200, then a second one, and reports
when the first was answered (from launch) and how long the second took: the figure a user
feels, and whether the process was still busy loading. Then, for `Served.watch_s`, it keeps
asking every `WATCH_EVERY_S` and reports the slowest answer: the loads a process starts once
ready run beside its requests, and one that holds the interpreter's lock for a second (the
ONNX library's import, ADR 0245) shows there and nowhere else. With `Served.session_at_s`, a
session is recorded that many seconds into the watch (a subject registered, three of its lines
relayed, the session ended), and the slowest answer from then on is reported too: the first
session a start reads builds what its sync needs, beside the requests (ADR 0247).
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

from factledger.adapters.postgres_server import PostgresLocation

READY_TIMEOUT_S = 120.0
POLL_S = 0.01
SERVED_PATH = "/v1/whoami"
WATCH_EVERY_S = 0.05
# A session's subject lines: a name, a role and employer, a supplier switch, a preference.
SESSION_LINES = (
    "Hi, this is Dana Ortiz, I run procurement at Brightwell Foods.",
    "We switched our flour supplier to Millstone Mills last month.",
    "Please call me in the mornings; afternoons are packed with deliveries.",
)


def default_executable() -> Path:
    """The `factledger` script installed beside this interpreter."""
    return Path(sys.executable).parent / "factledger"


@dataclass(frozen=True, slots=True)
class Start:
    """One start: wall-clock seconds to ready, the process's CPU seconds until then and, of
    its main thread (the one a start to ready waits for), the seconds it ran, the seconds it
    was runnable but waiting for a core (the machine's other work) and the rest, in which it
    was blocked (on a database, a disk, a lock). None without Linux's `/proc` schedstat."""

    seconds: float
    cpu_s: float | None
    main_ran_s: float | None = None
    main_queued_s: float | None = None
    # From launch to the answer of the first authenticated request sent after ready, and the
    # next request's own seconds (None without a token).
    served_s: float | None = None
    next_request_s: float | None = None
    # The slowest answer of those asked every `WATCH_EVERY_S` for `Served.watch_s` after the
    # next request, and how many were asked (None and 0 without a token or a watch).
    slowest_watched_s: float | None = None
    watched: int = 0
    # With `Served.session_at_s`: the slowest answer sent once the session began, and the
    # seconds the session's requests took (None without it).
    slowest_from_session_s: float | None = None
    session_s: float | None = None

    @property
    def main_blocked_s(self) -> float | None:
        if self.main_ran_s is None or self.main_queued_s is None:
            return None
        return max(0.0, self.seconds - self.main_ran_s - self.main_queued_s)


@dataclass(frozen=True, slots=True)
class Contender:
    """One way to start: an executable, with or without a graph cache of its own."""

    label: str
    executable: Path
    cache: bool


def measure_serve_start(
    contenders: list[Contender],
    workdir: Path,
    *,
    runs: int,
    stores: Callable[[str], Mapping[str, str]] | None = None,
    served: Served | None = None,
    restarts: bool = False,
) -> dict[str, list[Start]]:
    """Seconds from launch to ready per contender, one per start, in order; the contenders
    take turns, so they share the machine's load. Each start gets a new data directory and,
    with `stores`, the settings it returns for the start's name (a PostgreSQL database of
    its own: `postgres_stores`); with `restarts`, a contender's starts after its first are
    restarts on the data directory and stores its first start made (and migrated). With
    `served`, the token settings go to every start, and its token is sent right after ready.
    Each contender's modules are compiled to bytecode first, as pip's install of the wheel
    leaves them (`compile_bytecode`)."""
    for contender in contenders:
        compile_bytecode(contender.executable)
    server_env = served.server_env if served is not None else {}
    envs = [
        {**_environment(contender, workdir / str(n)), **server_env}
        for n, contender in enumerate(contenders)
    ]
    seconds: dict[str, list[Start]] = {contender.label: [] for contender in contenders}
    for run in range(runs):
        for contender, env in zip(contenders, envs, strict=True):
            slug = _slug(contender.label)
            name = f"start_{slug}" if restarts else f"start_{run}_{slug}"
            if stores is not None and (run == 0 or not restarts):
                env.update(stores(name))  # a restart keeps its first start's stores
            start_env = {**env, "FACTLEDGER_DATA_DIR": str(workdir / f"data-{name}")}
            seconds[contender.label].append(_one_start(contender.executable, start_env, served))
    return seconds


@dataclass(frozen=True, slots=True)
class Served:
    """What a start needs to be asked a request: the server's token settings (environment
    variables) and a bearer token they verify."""

    server_env: Mapping[str, str]
    token: str
    watch_s: float = 0.0  # how long to keep asking after the next request
    session_at_s: float | None = None  # when into the watch a session is recorded, if at all


# Imports every layer's modules: what an install compiles is what a start reads.
_COMPILE = """
import compileall, importlib.util, sys
for layer in sys.argv[1:]:
    spec = importlib.util.find_spec("factledger." + layer)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(folder, quiet=1)
"""
_LAYERS = ("domain", "application", "adapters", "projections", "api", "client", "integrations",
           "testing")  # fmt: skip


def compile_bytecode(executable: Path) -> None:
    """Compiles the `factledger` layers of `executable`'s install to bytecode. pip compiles
    a wheel's modules when it installs them (the container's image has them); an editable
    install under `PYTHONDONTWRITEBYTECODE` has none, and every start would compile each
    module from its source, which is no start a deployment makes."""
    python = executable.parent / "python"
    subprocess.run([str(python), "-c", _COMPILE, *_LAYERS], check=True)  # noqa: S603


def postgres_stores(location: PostgresLocation) -> Callable[[str], dict[str, str]]:
    """Settings of the PostgreSQL topology (ledger, views, short-term memory, sync queue and
    pgvector in one server), each start in a new database of `location`'s server."""

    def stores(name: str) -> dict[str, str]:
        with psycopg.connect(location.conninfo, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        auth = f"{location.user}:{location.password}"
        return {
            "FACTLEDGER_DATABASE_URL": f"postgresql://{auth}@/{name}?host={location.host}",
            "FACTLEDGER_EVENT_STORE__KIND": "postgres",
            "FACTLEDGER_VIEWS__KIND": "postgres",
            "FACTLEDGER_SHORT_TERM__KIND": "postgres",
            "FACTLEDGER_SYNC__STORE__KIND": "postgres",
            "FACTLEDGER_BACKEND__KIND": "pgvector",
        }

    return stores


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label.lower())


def _environment(contender: Contender, workdir: Path) -> dict[str, str]:
    workdir.mkdir(parents=True)
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(workdir / "user-cache"),
        "FACTLEDGER_LOG_JSON": "true",
    }
    if contender.cache:
        env["FACTLEDGER_EMBEDDER__CACHE_DIR"] = str(workdir / "graph-cache")
    else:
        # A directory cannot live under a file: the embedder compiles in memory every start.
        blocker = workdir / "no-cache"
        blocker.write_bytes(b"")
        env["FACTLEDGER_EMBEDDER__CACHE_DIR"] = str(blocker / "cache")
    return env


def _one_start(executable: Path, env: dict[str, str], served: Served | None) -> Start:
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 - a path the operator chose, no shell
        [str(executable), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        return _wait_until_ready(port, process, started, served)
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminates a served process, and kills it if it has not exited 20 s later."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_until_ready(
    port: int, process: subprocess.Popen[bytes], started: float, served: Served | None
) -> Start:
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, timeout=1.0) as client:
        while time.perf_counter() - started < READY_TIMEOUT_S:
            if process.poll() is not None:
                raise RuntimeError(f"factledger serve exited with {process.returncode}")
            try:
                if client.get("/readyz").status_code == httpx.codes.OK:
                    seconds, cpu = time.perf_counter() - started, _cpu_s(process.pid)
                    ran, queued = _main_thread_schedule(process.pid)
                    ready = Start(seconds, cpu, ran, queued)
                    return ready if served is None else _served(client, served, started, ready)
            except httpx.TransportError:
                pass
            time.sleep(POLL_S)
    raise TimeoutError(f"not ready within {READY_TIMEOUT_S:.0f} s")


def _served(
    client: httpx.Client,
    served: Served,
    started: float,
    ready: Start,
    session_client: Callable[[], httpx.Client] | None = None,
) -> Start:
    """`ready` with the seconds to a first answered request, the next one's seconds and the
    slowest answer watched after it; `session_client` makes the watch's session's own client
    (by default one to `client`'s server)."""
    headers = {"Authorization": f"Bearer {served.token}"}
    timeout = httpx.Timeout(READY_TIMEOUT_S)
    first = client.get(SERVED_PATH, headers=headers, timeout=timeout)
    served_s = time.perf_counter() - started
    first.raise_for_status()
    client.get(SERVED_PATH, headers=headers, timeout=timeout).raise_for_status()
    next_request = time.perf_counter() - started - served_s
    recorded = SessionRecorded()
    session: threading.Thread | None = None
    if served.session_at_s is not None:
        base_url = str(client.base_url)
        own_client = session_client or (
            lambda: httpx.Client(base_url=base_url, timeout=READY_TIMEOUT_S)
        )
        session = threading.Thread(
            target=recorded.record, args=(own_client, headers, served.session_at_s), daemon=True
        )
        session.start()
    answers = _asked(client, headers, served.watch_s)
    if session is not None:
        session.join(READY_TIMEOUT_S)
        recorded.check()
    slowest, watched = _slowest(answers)
    from_session = (
        _slowest([a for a in answers if a[0] >= recorded.began])[0]
        if recorded.began is not None
        else None
    )
    return replace(
        ready,
        served_s=served_s,
        next_request_s=next_request,
        slowest_watched_s=slowest,
        watched=watched,
        slowest_from_session_s=from_session,
        session_s=recorded.seconds,
    )


class SessionRecorded:
    """One session recorded through the API on its own connection, with the service's token
    (which registers subjects and relays their lines): when it began and how long it took, or
    the error that stopped it."""

    def __init__(self) -> None:
        self.began: float | None = None
        self.seconds: float | None = None
        self.error: Exception | None = None

    def record(
        self, client: Callable[[], httpx.Client], headers: Mapping[str, str], after_s: float
    ) -> None:
        time.sleep(after_s)
        self.began = time.perf_counter()
        try:
            with client() as http:
                _record_session(http, headers)
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            self.error = exc
            return
        self.seconds = time.perf_counter() - self.began

    def check(self) -> None:
        """Raises what stopped the session, or says it never finished."""
        if self.error is not None:
            raise RuntimeError(f"the watch's session failed: {self.error!r}") from self.error
        if self.seconds is None:
            raise TimeoutError("the watch's session did not finish")


def _record_session(http: httpx.Client, headers: Mapping[str, str]) -> None:
    registered = http.post(
        "/v1/subjects", json={"kind": "lead", "external_ref": "start-watch"}, headers=headers
    )
    registered.raise_for_status()
    sessions = f"/v1/subjects/{registered.json()['subject_id']}/sessions"
    started = http.post(sessions, json={"session_id": "s1", "channel": "chat"}, headers=headers)
    started.raise_for_status()
    for line in SESSION_LINES:
        said = {"role": "subject", "text": line}
        http.post(f"{sessions}/s1/messages", json=said, headers=headers).raise_for_status()
    http.post(f"{sessions}/s1/end", json={}, headers=headers).raise_for_status()


def _watch(
    client: httpx.Client, headers: Mapping[str, str], seconds: float
) -> tuple[float | None, int]:
    """The slowest answer to `SERVED_PATH` asked every `WATCH_EVERY_S` for `seconds`, and
    how many were asked; (None, 0) for no watch."""
    return _slowest(_asked(client, headers, seconds))


def _asked(
    client: httpx.Client, headers: Mapping[str, str], seconds: float
) -> list[tuple[float, float]]:
    """(when sent, seconds to its answer) of each request to `SERVED_PATH` asked every
    `WATCH_EVERY_S` for `seconds`."""
    timeout = httpx.Timeout(READY_TIMEOUT_S)
    answers: list[tuple[float, float]] = []
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        sent = time.perf_counter()
        client.get(SERVED_PATH, headers=headers, timeout=timeout).raise_for_status()
        took = time.perf_counter() - sent
        answers.append((sent, took))
        time.sleep(max(0.0, WATCH_EVERY_S - took))
    return answers


def _slowest(answers: list[tuple[float, float]]) -> tuple[float | None, int]:
    return max((took for _, took in answers), default=None), len(answers)


def _cpu_s(pid: int) -> float | None:
    """User plus system CPU seconds of a live process so far (None without `/proc`)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _main_thread_schedule(pid: int) -> tuple[float | None, float | None]:
    """Seconds the main thread of `pid` has run and has waited in the run queue so far
    (`/proc/<pid>/task/<pid>/schedstat`: nanoseconds on a CPU, nanoseconds runnable but not
    running, time slices); (None, None) without it."""
    try:
        ran, queued, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return None, None
    return int(ran) / 1e9, int(queued) / 1e9


def schedule_summary(starts: list[Start]) -> str:
    """The main thread's split of the starts after the first, medians: ran / queued for a
    core / blocked, in seconds ("-" without schedstat)."""
    rest = starts[1:] or starts
    ran = [s.main_ran_s for s in rest if s.main_ran_s is not None]
    queued = [s.main_queued_s for s in rest if s.main_queued_s is not None]
    blocked = [b for s in rest if (b := s.main_blocked_s) is not None]
    if not (ran and queued and blocked):
        return "-"
    medians = (statistics.median(x) for x in (ran, queued, blocked))
    return " / ".join(f"{m:.2f}" for m in medians)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def served_summary(starts: list[Start]) -> str:
    """Seconds from launch to a first served request, every start, their median after the
    first, and the median of the next request's milliseconds ("-" without a token)."""
    served = [s.served_s for s in starts if s.served_s is not None]
    following = [s.next_request_s for s in starts if s.next_request_s is not None]
    if not served:
        return "-"
    rest = served[1:] or served
    every = ", ".join(f"{s:.2f}" for s in served)
    return (
        f"{every} (median after the first {statistics.median(rest):.2f}); next request "
        f"{statistics.median(following) * 1000:.0f} ms"
    )


def watched_summary(starts: list[Start]) -> str:
    """The slowest answer watched after ready, in milliseconds, every start, and their
    median after the first ("-" without a watch)."""
    slowest = [s.slowest_watched_s for s in starts if s.slowest_watched_s is not None]
    if not slowest:
        return "-"
    every, median = _every_start_ms(slowest)
    asked = statistics.median(s.watched for s in starts if s.slowest_watched_s is not None)
    return f"{every} ms (median after the first {median:.0f} ms; {asked:.0f} answers a start)"


def session_summary(starts: list[Start]) -> str:
    """The slowest answer from the watch's session on, in milliseconds, every start, their
    median after the first, and the session's own median seconds ("-" without a session)."""
    slowest = [s.slowest_from_session_s for s in starts if s.slowest_from_session_s is not None]
    took = [s.session_s for s in starts if s.session_s is not None]
    if not slowest or not took:
        return "-"
    every, median = _every_start_ms(slowest)
    return (
        f"{every} ms (median after the first {median:.0f} ms); the session's requests took "
        f"{statistics.median(took) * 1000:.0f} ms (median)"
    )


def _every_start_ms(seconds: list[float]) -> tuple[str, float]:
    """Each start's figure in milliseconds, in order, and the median of those after the
    first (of the one, for a single start)."""
    rest = seconds[1:] or seconds
    return ", ".join(f"{s * 1000:.0f}" for s in seconds), statistics.median(rest) * 1000


def render(seconds: dict[str, list[Start]]) -> str:
    """A markdown table: per contender its first start, the median of the others, all starts,
    the same for the CPU seconds to ready, and the seconds to a first served request."""
    lines = [
        "| start | first s | median after the first s | every start s, in order "
        "| CPU s to ready: first / median after | first served request s | load avg |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, starts in seconds.items():
        walls = [s.seconds for s in starts]
        rest = f"{statistics.median(walls[1:]):.2f}" if len(walls) > 1 else "-"
        every = ", ".join(f"{s:.2f}" for s in walls)
        lines.append(
            f"| {label} | {walls[0]:.2f} | {rest} | {every} | {cpu_summary(starts)} "
            f"| {served_summary(starts)} | {os.getloadavg()[0]:.1f} |"
        )
    return "\n".join(lines)


def cpu_summary(starts: list[Start]) -> str:
    """The first start's CPU seconds to ready and the median of the others'."""
    cpus = [s.cpu_s for s in starts if s.cpu_s is not None]
    if not cpus:
        return "-"
    rest = f"{statistics.median(cpus[1:]):.2f}" if len(cpus) > 1 else "-"
    return f"{cpus[0]:.2f} / {rest}"
