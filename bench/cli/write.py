"""`factledger-lab bench write`: the write path on loopback (issue 19), every figure printed
with the load average it was taken under."""

from __future__ import annotations

import contextlib
import shlex
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.bench.cli.load import _credentials, _split
from factledger.bench.load.run import Credentials
from factledger.bench.load.servers import TOPOLOGIES
from factledger.bench.machine import load_average
from factledger.bench.serve_start import (
    Contender,
    Served,
    cpu_summary,
    default_executable,
    measure_serve_start,
    postgres_stores,
    schedule_summary,
    served_summary,
    session_summary,
    watched_summary,
)
from factledger.bench.write.cold_loads import TURNS, measure_cold_loads, seeded_stores
from factledger.bench.write.history import SIZES
from factledger.bench.write.keyed_costs import (
    OPERATIONS,
    keyed_costs_table,
    measure_keyed_costs,
    stores,
)
from factledger.bench.write.keyed_costs import (
    TURNS as KEYED_TURNS,
)
from factledger.bench.write.lag import LagRun, measure_lag
from factledger.bench.write.loads import WARM_LOADS, measure_loads
from factledger.bench.write.loads import seeded as seeded_subjects
from factledger.bench.write.overhead import APPENDS, measure_overhead
from factledger.bench.write.rebuild import rebuilds
from factledger.bench.write.run import PARTS, Rate, closed_loop, history, label, searchable
from factledger.bench.write.search import measure_lifted_search, measure_search
from factledger.bench.write.store_appends import measure_store_appends
from factledger.bench.write.sync import SyncFigures, measure_sync

ALL_PARTS = (
    *PARTS,
    "searchable",
    "history",
    "loads",
    "overhead",
    "search",
    "rebuild",
    "lag",
    "sync",
    "start",
    "store-appends",
    "keyed-costs",
)


def write(
    parts: Annotated[
        str, typer.Option(help=f"Comma-separated: {', '.join(ALL_PARTS)}.")
    ] = ",".join(ALL_PARTS),
    topologies: Annotated[
        str,
        typer.Option(help=f"For appends, ends, searchable and start: {', '.join(TOPOLOGIES)}."),
    ] = "embedded",
    clients: Annotated[int, typer.Option(min=1, max=256, help="Closed-loop clients.")] = 16,
    client_processes: Annotated[
        int, typer.Option(min=1, max=8, help="Processes the clients are spread over.")
    ] = 2,
    seconds: Annotated[float, typer.Option(min=1, max=300, help="Per part, at most.")] = 15.0,
    max_requests: Annotated[int, typer.Option(min=1, max=200_000)] = 20_000,
    rounds: Annotated[int, typer.Option(min=1, max=2_000, help="History: appends per size.")] = 100,
    rebuild_events: Annotated[
        int, typer.Option(min=100, max=500_000, help="Rebuild: events in the ledger.")
    ] = 50_000,
    rebuild_messages: Annotated[
        int,
        typer.Option(min=1, max=500, help="Rebuild: lines per session (1 short, or long ones)."),
    ] = 1,
    start_runs: Annotated[int, typer.Option(min=1, max=20, help="Cold starts timed.")] = 3,
    start_restarts: Annotated[
        bool,
        typer.Option(help="Start, postgres: also restarts on a database the first start migrated."),
    ] = False,
    start_watch_seconds: Annotated[
        float,
        typer.Option(
            min=0.0, max=120.0, help="Start: seconds of requests after ready, the slowest shown."
        ),
    ] = 10.0,
    start_session_at_seconds: Annotated[
        float,
        typer.Option(
            min=-1.0,
            max=120.0,
            help="Start: seconds into the watch a session is recorded (negative: none).",
        ),
    ] = 3.0,
    sync_sessions: Annotated[
        int, typer.Option(min=1, max=10_000, help="Sync: recorded sessions (9 facts each).")
    ] = 60,
    lag_appends_per_s: Annotated[
        float, typer.Option(min=0, max=10_000, help="Lag: message appends offered a second.")
    ] = 400,
    lag_ends_per_s: Annotated[
        float, typer.Option(min=0, max=1_000, help="Lag: session ends offered a second.")
    ] = 50,
    sync_processes: Annotated[
        int, typer.Option(min=1, max=8, help="Sync: worker processes draining side by side.")
    ] = 1,
    sync_rounds: Annotated[
        int,
        typer.Option(
            min=1,
            max=10,
            help="Sync: drains of each build, in turns (every other round the baseline first).",
        ),
    ] = 1,
    worker_processes: Annotated[
        int, typer.Option(min=0, max=8, help="postgres topology: `factledger worker` processes.")
    ] = 2,
    workdir: Annotated[Path | None, typer.Option(help="Data and logs (default: temp).")] = None,
    baseline_python: Annotated[
        Path | None,
        typer.Option(help="Another install's interpreter: its servers take turns with ours."),
    ] = None,
) -> None:
    """Message appends and session ends (2 proposals), each on its own with closed-loop
    clients; appends on subjects of 10, 1,000 and 10,000 events; cold start of `serve`."""
    chosen = _split(parts, ALL_PARTS)
    where = _split(topologies, TOPOLOGIES)
    command = shlex.join(
        ["factledger-lab", "bench", "write", "--parts", parts, "--topologies", topologies,
         "--clients", str(clients), "--client-processes", str(client_processes),
         "--seconds", f"{seconds:g}", "--max-requests", str(max_requests),
         "--rounds", str(rounds), "--rebuild-events", str(rebuild_events),
         "--rebuild-messages", str(rebuild_messages),
         "--start-runs", str(start_runs), "--start-watch-seconds", f"{start_watch_seconds:g}",
         "--start-session-at-seconds", f"{start_session_at_seconds:g}",
         "--sync-sessions", str(sync_sessions),
         *(["--start-restarts"] if start_restarts else []),
         "--sync-processes", str(sync_processes), "--sync-rounds", str(sync_rounds),
         "--lag-appends-per-s", f"{lag_appends_per_s:g}", "--lag-ends-per-s", f"{lag_ends_per_s:g}",
         "--worker-processes", str(worker_processes)]
        + (["--baseline-python", str(baseline_python)] if baseline_python else [])
    )  # fmt: skip
    console = Console(stderr=True)
    console.print(f"load average at start: {load_average()}")
    credentials = _credentials()
    # Capacity, not policy: the token buckets (500 requests/s per tenant by default) would
    # answer 429 before the server is saturated.
    env = {**credentials.server_env, "FACTLEDGER_API__RATE_LIMIT__ENABLED": "false"}
    rates: list[Rate] = []
    builds = [sys.executable] + ([str(baseline_python)] if baseline_python else [])
    with tempfile.TemporaryDirectory(prefix="factledger-write-") as scratch:
        root = workdir or Path(scratch)
        for part, topology, python in (
            (p, t, b) for p in chosen if p in PARTS for t in where for b in builds
        ):
            rate = closed_loop(
                part,
                client_processes=client_processes,
                topology=topology,
                clients=clients,
                seconds=seconds,
                max_requests=max_requests,
                workdir=root,
                server_env=env,
                service=credentials.service_token,
                agent_token=credentials.agent_token,
                python=python,
                workers=worker_processes,
            )
            console.print(f"{part} on {topology} ({rate.build}): {rate.per_second:.1f}/s")
            rates.append(rate)
        if "searchable" in chosen:
            for topology, python in ((t, b) for t in where for b in builds):
                rate = searchable(
                    sessions=rounds // 5 or 1,
                    workdir=root,
                    server_env=env,
                    service=credentials.service_token,
                    python=python,
                    topology=topology,
                )
                console.print(f"searchable on {topology} ({rate.build}): p95 {rate.p95_ms:.0f} ms")
                rates.append(rate)
        typer.echo(f"Command: `{command}`\n")
        if rates:
            typer.echo(_rates_table(rates))
        if "history" in chosen:
            typer.echo(history_table(credentials, builds, rounds=rounds, workdir=root, env=env))
        if "loads" in chosen:
            typer.echo(loads_table(root / "loads", builds))
            typer.echo(cold_loads_table(root / "cold-loads", builds))
        if "overhead" in chosen:
            typer.echo(overhead_table(root / "overhead", builds))
        if "keyed-costs" in chosen:
            typer.echo(_keyed_costs(root / "keyed-costs", builds))
        if "search" in chosen:
            found = measure_search()
            typer.echo(
                f"\nIn-memory search, {found.facts:,} facts in one subject, median ms: numpy "
                f"scan {found.numpy_ms:.2f}, backend {found.backend_ms:.2f} "
                f"({found.backend_ms / found.numpy_ms:.2f}x), filter-first (before) "
                f"{found.filter_first_ms:.2f} ({found.filter_first_ms / found.numpy_ms:.1f}x) "
                f"(load avg {found.load_average})"
            )
            lifted = measure_lifted_search()
            typer.echo(
                f"With query keywords held by facts (keyword lift), median ms: numpy scan "
                f"{lifted.numpy_ms:.2f}, backend {lifted.backend_ms:.2f} "
                f"({lifted.backend_ms / lifted.numpy_ms:.2f}x), every fact scored (before) "
                f"{lifted.filter_first_ms:.2f} ({lifted.filter_first_ms / lifted.numpy_ms:.1f}x) "
                f"(load avg {lifted.load_average})"
            )
        if "rebuild" in chosen:
            rebuilt_logs = rebuilds(
                root / "rebuild", builds, events=rebuild_events, messages=rebuild_messages
            )
            for store, rebuilt in rebuilt_logs:
                typer.echo(
                    f"\nProjection rebuild ({rebuilt.build}), {store}, {rebuilt.events:,} "
                    f"events, {rebuild_messages} line(s) per session: {rebuilt.seconds:.2f} s, "
                    f"{rebuilt.per_second:,.0f} events/s; "
                    f"{rebuilt.cpu_seconds:.2f} CPU s, {rebuilt.per_cpu_second:,.0f} events per "
                    f"CPU s"
                    + (
                        f"; with the server's {rebuilt.server_cpu_seconds:.2f} CPU s, "
                        f"{rebuilt.per_cpu_second_with_server:,.0f} events per CPU s"
                        if rebuilt.server_cpu_seconds
                        else ""
                    )
                    + (
                        f"; main thread ran / queued for a core / blocked "
                        f"{rebuilt.main_ran_s:.2f} / {rebuilt.main_queued_s:.2f} / "
                        f"{rebuilt.main_blocked_s:.2f} s"
                        if rebuilt.main_ran_s
                        else ""
                    )
                    + f" (load avg {rebuilt.load_average})"
                )
        if "lag" in chosen:
            lag_run = LagRun(root, env, credentials.service_token, credentials.agent_token,
                             lag_appends_per_s, lag_ends_per_s, seconds)  # fmt: skip
            typer.echo(
                f"\nViews behind the ledger, the API offered {lag_appends_per_s:g} appends/s and "
                f"{lag_ends_per_s:g} session ends/s:\n\n"
                "| topology | build | s | appends/s | ends/s | failed | events | "
                "lag p50 / p95 / max s | gauge max events | load avg |\n|---|---|---|---|---|---|"
                "---|---|---|---|"
            )
            for topology, python in ((t, b) for t in where for b in builds):
                f = measure_lag(lag_run, python, topology=topology)
                typer.echo(
                    f"| {f.topology} | {f.build} | {f.seconds:g} | {f.appends / f.seconds:.1f} | "
                    f"{f.ends / f.seconds:.1f} | {f.failed} | {f.events} | {f.p50_lag_s:.2f} / "
                    f"{f.p95_lag_s:.2f} / {f.max_lag_s:.2f} | {f.max_gauge} | {f.load_average} |"
                )
        if "sync" in chosen:
            named = [(label(python), python) for python in builds]
            for figures in measure_sync(
                root / "sync",
                named,
                sessions=sync_sessions,
                processes=sync_processes,
                rounds=sync_rounds,
            ):
                typer.echo(
                    f"\nSync into pgvector ({figures.build}, round {figures.round}): "
                    f"{figures.sessions} sessions, "
                    f"{figures.facts} facts, {figures.records} records in "
                    f"{figures.seconds:.2f} s, {figures.facts_per_second:.1f} facts/s; "
                    f"{figures.cpu_seconds:.2f} CPU s, {figures.facts_per_cpu_second:.1f} facts "
                    f"per CPU s{_server_cpu(figures)} (load avg {figures.load_average})"
                )
        if "store-appends" in chosen:
            for run in range(3):  # the builds take turns
                for python in builds:
                    measured = measure_store_appends(python)
                    typer.echo(
                        f"\nPostgreSQL append path without HTTP ({label(python)}, run {run + 1}): "
                        f"{measured.appends} appends, {measured.per_second:.0f}/s, "
                        f"{measured.cpu_ms_each:.2f} ms CPU each in the client "
                        f"(load avg {measured.load_average})"
                    )
        if "start" in chosen:
            contenders = [Contender("this", default_executable(), cache=True)]
            if baseline_python is not None:
                executable = baseline_python.parent / "factledger"
                contenders.append(Contender("baseline", executable, cache=True))
            served = Served(
                credentials.server_env,
                credentials.service_token,
                start_watch_seconds,
                start_session_at_seconds if start_session_at_seconds >= 0 else None,
            )
            kinds = [(t, False) for t in where]
            if start_restarts and "postgres" in where:
                kinds.append(("postgres", True))
            for topology, restarts in kinds:
                folder = root / "start" / (f"{topology}-restarts" if restarts else topology)
                typer.echo(_starts(topology, contenders, folder, start_runs, served, restarts))


def _starts(
    topology: str,
    contenders: list[Contender],
    workdir: Path,
    runs: int,
    served: Served,
    restarts: bool,
) -> str:
    """Cold starts of `factledger serve` on `topology`, the contenders taking turns, each
    asked a first request once ready; on PostgreSQL each start gets a new database of one
    server, or with `restarts` each contender one database its first start migrates."""
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        stores = None
        if topology == "postgres":
            database = EmbeddedPostgres(workdir / "pg", delete_on_stop=True)
            stack.callback(database.stop)
            stores = postgres_stores(database.location)
        started_at = load_average()
        starts = measure_serve_start(
            contenders, workdir, runs=runs, stores=stores, served=served, restarts=restarts
        )
    lines = []
    for build, starts_each in starts.items():
        seconds_each = [s.seconds for s in starts_each]
        cpus = [f"{s.cpu_s:.2f}" for s in starts_each if s.cpu_s is not None]
        lines.append(
            f"\nCold start of `factledger serve` to ready, {topology}"
            f"{' (restarts after the first, on its migrated database)' if restarts else ''} "
            f"({build}): median "
            f"{statistics.median(seconds_each):.2f} s, every start "
            f"{', '.join(f'{s:.2f}' for s in seconds_each)} s; CPU s to ready, every start "
            f"{', '.join(cpus) or '-'} (first / median after {cpu_summary(starts_each)}); "
            f"main thread after the first, medians: ran / queued for a core / blocked "
            f"{schedule_summary(starts_each)} s; first served request (`GET /v1/whoami` "
            f"right after ready) at, from launch: {served_summary(starts_each)}; slowest "
            f"answer in the watch after it: {watched_summary(starts_each)}; slowest from the "
            f"watch's session on: {session_summary(starts_each)} "
            f"(load avg {started_at} at the first start, {load_average()} after the last)"
        )
    return "".join(lines)


def _rates_table(rates: list[Rate]) -> str:
    lines = [
        "| part | build | topology | clients | answered | failed | per s | p50 / p95 / p99 ms | "
        "in the app p50 ms | outside the use case p50 ms | server CPU ms per answer | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines.extend(
        f"| {r.part} | {r.build} | {r.topology} | {r.clients} | {r.ok} | {_failures(r.failed)} | "
        f"{r.per_second:.1f} | {r.p50_ms:.0f} / {r.p95_ms:.0f} / {r.p99_ms:.0f} | "
        f"{r.in_app_p50_ms:.1f} | {_ms(r.overhead_p50_ms)} | {_ms(r.cpu_ms_per_answer)} | "
        f"{r.load_average} |"
        for r in rates
    )
    return "\n".join(lines)


def history_table(
    credentials: Credentials, builds: list[str], *, rounds: int, workdir: Path, env: dict[str, str]
) -> str:
    """Each build's appends, session ends and decisions on subjects of each size, against
    the same request on the smallest subject."""
    lines = [
        "\n| build | request | subject events | p50 at the client ms | in the app ms | "
        "use case ms | outside the use case ms | vs 10 events (in the app) | load avg |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for python in builds:
        rows = history(
            rounds=rounds,
            workdir=workdir,
            server_env=env,
            service=credentials.service_token,
            reviewer=credentials.reviewer_token or credentials.service_token,
            python=python,
        )
        smallest = {r.request: r.in_app_p50_ms or 1.0 for r in rows if r.size == min(SIZES)}
        lines.extend(
            f"| {row.build} | {row.request} | {row.size:,} | {row.client_p50_ms:.2f} | "
            f"{row.in_app_p50_ms:.2f} | {_ms(row.use_case_p50_ms)} | "
            f"{_ms(row.overhead_p50_ms)} | "
            f"{row.in_app_p50_ms / smallest[row.request]:.2f}x | {row.load_average} |"
            for row in rows
        )
    return "\n".join(lines)


def loads_table(workdir: Path, builds: list[str]) -> str:
    """Loading a subject in process (SQLite), each build on the same file, turn by turn."""
    subjects = seeded_subjects(workdir)
    lines = [
        "\n| build | subject events | first load ms | cached load ms (median of "
        f"{WARM_LOADS}) | load avg |",
        "|---|---|---|---|---|",
    ]
    for python in builds:
        lines.extend(
            f"| {f.build} | {f.size:,} | {f.cold_ms:.2f} | {f.warm_ms:.3f} | {f.load_average} |"
            for f in measure_loads(workdir, subjects, python, label(python))
        )
    return "\n".join(lines)


def cold_loads_table(workdir: Path, builds: list[str]) -> str:
    """A process's first load with snapshots and with the whole stream, on both stores."""
    lines = [
        "\n| build | store | subject events | tail after snapshot | first load with snapshot "
        "ms (CPU ms) | whole replay ms (CPU ms) | sealing a snapshot CPU ms | load avg |"
        "\n|---|---|---|---|---|---|---|---|",
    ]
    with seeded_stores(workdir) as stores:
        for store, where, subjects in stores:
            for python in builds:
                lines.extend(
                    f"| {label(python)} | {f.store} | {f.size:,} | {f.tail} | "
                    f"{f.snapshot_ms:.1f} ({f.snapshot_cpu_ms:.1f}) | "
                    f"{f.replay_ms:.1f} ({f.replay_cpu_ms:.1f}) | {f.seal_cpu_ms:.1f} | "
                    f"{f.load_average} |"
                    for f in measure_cold_loads(store, where, subjects, python)
                )
    lines.append(f"\nMedians of {TURNS} turns, each in a new ledger (nothing cached).")
    return "\n".join(lines)


def _keyed_costs(workdir: Path, builds: list[str]) -> str:
    """The steps keyed ids and forgets added, with and without, on both stores; the builds
    take turns twice on each."""
    costs = []
    with stores(workdir) as where_each:
        for store, where in where_each:
            for python in [*builds, *builds]:
                costs.extend(measure_keyed_costs(store, where, python, label(python)))
    return keyed_costs_table(costs) + (
        f"\n\nThe median of {KEYED_TURNS * OPERATIONS} operations per variant, the variants "
        "alternating operation by operation; CPU is the ledger's process (PostgreSQL's own is "
        "not in it)."
    )


def overhead_table(workdir: Path, builds: list[str]) -> str:
    """Sequential appends in process, three turns per build (the builds alternating)."""
    lines = [
        "\n| build | run | appends | in the app p50 ms | use case ms | idempotency record ms | "
        "outside them ms | load avg |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in range(3):
        for python in builds:
            f = measure_overhead(workdir / f"{label(python)}-{run}", python, label(python))
            lines.append(
                f"| {f.build} | {run + 1} | {APPENDS} | {f.app_ms:.2f} | {_ms(f.use_case_ms)} | "
                f"{_ms(f.idempotency_ms)} | {_ms(f.outside_ms)} | {f.load_average} |"
            )
    return "\n".join(lines)


def _server_cpu(figures: SyncFigures) -> str:
    """PostgreSQL's server CPU over the drain, and facts per CPU second of both, if measured."""
    server = figures.server_cpu_seconds
    if server is None:
        return ""
    both = figures.cpu_seconds + server
    per_cpu = figures.facts / both if both else 0.0
    return f"; server {server:.2f} CPU s, {per_cpu:.1f} facts per CPU s of both"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _failures(failed: dict[int, int]) -> str:
    return ", ".join(f"{n} x {status or 'none'}" for status, n in sorted(failed.items())) or "0"


def register(group: typer.Typer) -> None:
    group.command(name="write")(write)
