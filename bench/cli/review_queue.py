"""`factledger-lab bench queue`: the review queue at contact-centre volume on PostgreSQL, its
pages timed in headless Chromium (issue 31)."""

from __future__ import annotations

import bisect
import pickle
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated

import psycopg
import structlog.testing
import typer
from fastapi import FastAPI
from pydantic import SecretStr
from rich.console import Console
from rich.table import Table

from factledger.adapters.postgres_server import EmbeddedPostgres
from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.http.auth import Role, TokenRequest, mint_token
from factledger.api.settings import (
    AuthSettings,
    JwtKeySettings,
    RateLimitSettings,
)
from factledger.application.review_queue.cursor import encode_cursor
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.bench.machine import load_average
from factledger.bench.review_queue.browse import Scenario, Timed, served, time_pages
from factledger.bench.review_queue.compose import Case, Compared, compare
from factledger.bench.review_queue.plans import kept_vs_counted, plans
from factledger.bench.review_queue.runtime import (
    VIEWS_SCHEMA,
    PrimedKeys,
    bench_runtime,
    counted_over_rows,
)
from factledger.bench.review_queue.seed import (
    CONVERSATIONS,
    INFERENCE,
    SEARCHED,
    TENANT,
    Seeded,
    first_recorded_of_kind,
    seed,
    utc_now,
)
from factledger.domain.provenance import Origin

console = Console()
BUDGET_MS = 300.0
# The side-by-side's other console: its name, and what the table compares.
BEFORE = "counted over rows"
COMPARED = (
    "combined filters, ages and text counted over the rows (before) vs from the counters (product)"
)
EVERY_SUBJECT = "crm"  # a text in every subject's reference: the broadest search


def _fixed(count: int) -> Callable[[datetime], int]:
    return lambda _at: count


def _older_than(recorded: list[datetime], age: timedelta) -> Callable[[datetime], int]:
    """The proposals recorded longer than `age` before the page's time (it moves while the
    bench runs: proposals cross the line)."""
    ordered = sorted(recorded)
    return lambda at: bisect.bisect_left(ordered, at - age)


def _scenarios(seeded: Seeded, deep_after: int) -> list[Scenario]:
    t = seeded.tally
    biggest = t.by_group.most_common(1)[0]
    return [
        Scenario("first page", {}, _fixed(t.total)),
        Scenario("field=supplier", {"field": "supplier"}, _fixed(t.by_field["supplier"])),
        Scenario("origin=inferred", {"origin": "inferred"}, _fixed(t.by_origin["inferred"])),
        Scenario(
            "kind=customer, origin=stated",
            {"kind": "customer", "origin": "stated"},
            _fixed(t.by_kind_origin["customer", "stated"]),
        ),
        Scenario(
            "proposer=agent:agent-7",
            {"proposer": "agent:agent-7"},
            _fixed(t.by_proposer["agent:agent-7"]),
        ),
        Scenario(
            f"conversation_type={CONVERSATIONS[1]}",
            {"conversation_type": CONVERSATIONS[1]},
            _fixed(t.by_conversation[CONVERSATIONS[1]]),
        ),
        Scenario(f"q={SEARCHED} (text search)", {"q": SEARCHED}, _fixed(t.by_ref_part[SEARCHED])),
        Scenario("older_than=7d", {"older_than": "7d"}, _older_than(t.recorded, timedelta(days=7))),
        Scenario(f"q={EVERY_SUBJECT} (every subject)", {"q": EVERY_SUBJECT}, _fixed(t.total)),
        Scenario(
            "kind=customer, field=supplier, older_than=7d",
            {"kind": "customer", "field": "supplier", "older_than": "7d"},
            _older_than(first_recorded_of_kind(t, "customer"), timedelta(days=7)),
        ),
        Scenario(f'group="{INFERENCE}"', {"group": biggest[0]}, _fixed(biggest[1])),
        Scenario(
            "a page 90% deep (cursor)",
            {"cursor": encode_cursor(QueueCursor(after=deep_after))},
            _fixed(t.total),
        ),
        Scenario("groups view", {"view": "groups"}, _fixed(len(t.by_group))),
    ]


def _cases(seeded: Seeded, deep_after: int) -> list[Case]:
    biggest = seeded.tally.by_group.most_common(1)[0][0]
    return [
        Case("first page", QueueFilter()),
        Case("field=supplier", QueueFilter(field="supplier")),
        Case("origin=inferred", QueueFilter(origin=Origin.INFERRED)),
        Case("kind=customer, origin=stated", QueueFilter(kind="customer", origin=Origin.STATED)),
        Case("proposer=agent:agent-7", QueueFilter(proposer="agent:agent-7")),
        Case(
            f"conversation_type={CONVERSATIONS[1]}",
            QueueFilter(conversation_type=CONVERSATIONS[1]),
        ),
        Case(f"q={SEARCHED} (text search)", QueueFilter(text=SEARCHED)),
        Case("older_than=7d", QueueFilter(proposed_before=utc_now() - timedelta(days=7))),
        Case(f"q={EVERY_SUBJECT} (every subject)", QueueFilter(text=EVERY_SUBJECT)),
        Case(
            "kind=customer, field=supplier, older_than=7d",
            QueueFilter(
                kind="customer",
                field="supplier",
                proposed_before=utc_now() - timedelta(days=7),
            ),
        ),
        Case(f'group="{INFERENCE}"', QueueFilter(group=biggest)),
        Case("a page 90% deep (cursor)", QueueFilter(), QueueCursor(after=deep_after)),
        Case("groups view", QueueFilter(), groups=True),
    ]


def _compared_table(compared: list[Compared], rounds: int) -> Table:
    table = Table(
        title=f"A page's server-side work in-process, {rounds} alternating rounds (ms): reads "
        "per shown row (before) vs the product's"
    )
    for column in ("page", "per row p50", "per row p95", "product p50", "product p95", "ratio"):
        table.add_column(column)
    for c in compared:
        table.add_row(
            c.case.name,
            f"{statistics.median(c.per_row):.1f}",
            f"{c.p95(c.per_row):.1f}",
            f"{statistics.median(c.product):.1f}",
            f"{c.p95(c.product):.1f}",
            f"{c.ratio_p50:.1f}x",
        )
    return table


def _side_by_side(before: list[Timed], after: list[Timed], what: str) -> Table:
    table = Table(title=f"Side by side, loads alternating (ms): {what}")
    for column in (
        "page",
        "before p50",
        "before p95",
        "product p50",
        "product p95",
        "server p50 before",
        "server p50 product",
        "ratio p95",
    ):
        table.add_column(column, justify="left" if column == "page" else "right")
    for b, a in zip(before, after, strict=True):
        table.add_row(
            a.scenario.name,
            f"{b.p50:.0f}",
            f"{b.p95:.0f}",
            f"{a.p50:.0f}",
            f"{a.p95:.0f}",
            f"{b.server_p50:.0f}",
            f"{a.server_p50:.0f}",
            f"{b.p95 / a.p95:.2f}x" if a.p95 else "-",
        )
    return table


def _table(timed: list[Timed], runs: int, variant: str = "product") -> Table:
    table = Table(
        title=f"Queue pages in headless Chromium ({variant}), {runs} loads each (ms, load to "
        "end of `load`; server: to first byte; response: to last byte; parsed: to "
        "domInteractive; DOM: to the end of DOMContentLoaded; opened: an item's evidence "
        "in context fetched on opening, to its fragment in the page)"
    )
    for column in (
        "page",
        "stated count",
        "tallied",
        "exact",
        "p50",
        "p95",
        "max",
        "server p50",
        "server p95",
        "response p50",
        "parsed p50",
        "DOM p50",
        "opened p50 / p95",
        "HTML KB",
    ):
        table.add_column(column)
    for t in timed:
        table.add_row(
            t.scenario.name,
            f"{t.stated:,}",
            f"{t.tallied[1]:,}"
            if t.tallied[0] == t.tallied[1]
            else f"{t.tallied[0]:,}-{t.tallied[1]:,}",
            "yes" if t.exact else "NO",
            f"{t.p50:.0f}",
            f"{t.p95:.0f}",
            f"{max(t.millis):.0f}",
            f"{t.server_p50:.0f}",
            f"{t.server_p95:.0f}",
            f"{t.response_p50:.0f}",
            f"{t.interactive_p50:.0f}",
            f"{t.dom_p50:.0f}",
            "-" if t.opened is None else f"{t.opened[0]:.0f} / {t.opened[1]:.0f}",
            f"{t.body_bytes / 1024:.0f}",
        )
    return table


def _seeded(
    runtime: Runtime, keys: PrimedKeys, kept: Path, subjects: int, per_subject: int, *, keep: bool
) -> Seeded:
    if kept.exists():
        # The bench's own file, written below by an earlier run of this command.
        earlier: Seeded = pickle.loads(kept.read_bytes())  # noqa: S301
        console.print(
            f"reusing the seeded database ({earlier.tally.total:,} proposals); rebuilding the "
            f"review queue (load {load_average()})"
        )
        queue = runtime.queue_projection
        if queue is None:
            raise RuntimeError("the runtime has no review queue")
        started = time.perf_counter()
        queue.rebuild(runtime.ledger)
        return replace(earlier, seconds_queue=time.perf_counter() - started)
    console.print(
        f"seeding {subjects:,} subjects x {per_subject} proposals (load {load_average()})"
    )
    seeded = seed(runtime, keys, subjects=subjects, per_subject=per_subject, now=utc_now())
    if keep:
        kept.write_bytes(pickle.dumps(seeded))
    return seeded


def _kept_table(conninfo: str, cases: list[Case]) -> Table:
    load = load_average()
    table = Table(
        title="The queue's statements in PostgreSQL (EXPLAIN ANALYZE, median of 7 alternating "
        "rounds, ms): counters read where they apply vs counted over the rows"
    )
    for column in ("page", "kept", "counted", "ratio"):
        table.add_column(column, justify="left" if column == "page" else "right")
    for row in kept_vs_counted(conninfo, VIEWS_SCHEMA, TENANT, cases):
        ratio = row.counted_ms / row.kept_ms if row.kept_ms else 0.0
        table.add_row(row.case, f"{row.kept_ms:.2f}", f"{row.counted_ms:.2f}", f"{ratio:.1f}x")
    table.caption = f"load average {load} before, {load_average()} after"
    return table


def _vacuumed(conninfo: str) -> None:
    """The steady state a live system reaches within a minute of a rebuild (autovacuum): the
    statistics and the visibility map of the rebuilt tables, so counts read the index alone."""
    started = time.perf_counter()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table in (
            "items",
            "subjects",
            "sessions",
            "counts",
            "groups",
            "group_subjects",
            "tuples",
            "tuple_days",
        ):
            conn.execute(f'VACUUM ANALYZE "{VIEWS_SCHEMA}".review_queue_{table}')
    console.print(
        f"review queue tables vacuumed and analysed in {time.perf_counter() - started:.1f} s"
    )


def _before_app(runtime: Runtime, auth: AuthSettings) -> FastAPI:
    """The side-by-side's other console: the product's, its combined filters, ages and text
    counted over the rows."""
    return create_app(
        ports=counted_over_rows(runtime),
        auth=auth,
        rate_limit=RateLimitSettings(enabled=False),
    )


def bench_queue(
    subjects: Annotated[int, typer.Option(min=10, max=100_000)] = 10_000,
    per_subject: Annotated[int, typer.Option(min=1, max=10, help="Pending proposals each.")] = 10,
    runs: Annotated[int, typer.Option(min=5, max=500, help="Loads of each page.")] = 30,
    workdir: Annotated[Path | None, typer.Option(help="Default: a new temporary folder.")] = None,
    compare_rounds: Annotated[
        int,
        typer.Option(
            min=0,
            max=500,
            help="Also time each page's server-side work in-process, reads per shown row "
            "(before) against the product's, in this many alternating rounds (0: skip).",
        ),
    ] = 20,
    profile: Annotated[
        bool, typer.Option(help="cProfile the product's rounds of the in-process comparison.")
    ] = False,
    pages: Annotated[bool, typer.Option(help="Time the pages in Chromium.")] = True,
    explain: Annotated[
        bool, typer.Option(help="Print each page's statements' plans (EXPLAIN ANALYZE).")
    ] = False,
    side_by_side: Annotated[
        bool,
        typer.Option(
            help="Also serve the console with combined filters, ages and text counted over the "
            "rows (as before their counters) and time both in Chromium, loads alternating."
        ),
    ] = True,
    keep: Annotated[
        bool,
        typer.Option(
            help="Keep the seeded database and its tally in WORKDIR; a later run with the same "
            "WORKDIR reuses them (the review queue is rebuilt from the log, so a change to its "
            "projection or tables is measured without seeding again)."
        ),
    ] = False,
) -> None:
    """Seeds SUBJECTS x PER_SUBJECT pending proposals on PostgreSQL (the embedded server),
    then times the review queue's first page, filtered pages, a deep page and the groups in
    headless Chromium; each page's stated count is checked against the seed's tally."""
    where = workdir or Path(tempfile.mkdtemp(prefix="factledger-queue-bench-"))
    secret = secrets.token_urlsafe(32)
    auth = AuthSettings(
        issuer="queue-bench",
        audience="factledger",
        keys=(JwtKeySettings(kid="bench", algorithm="HS256", secret=SecretStr(secret)),),
    )
    if keep and workdir is None:
        raise typer.BadParameter("--keep needs --workdir", param_hint="--keep")
    where.mkdir(parents=True, exist_ok=True)
    kept = where / "seeded.pickle"
    database = EmbeddedPostgres(where / "pg", delete_on_stop=not keep)
    try:
        with bench_runtime(database.location) as (runtime, keys):
            with structlog.testing.capture_logs():
                seeded = _seeded(runtime, keys, kept, subjects, per_subject, keep=keep)
            console.print(
                f"{seeded.tally.total:,} pending proposals, {seeded.events:,} events: written "
                f"in {seeded.seconds_writing:.1f} s, profile views rebuilt in "
                f"{seeded.seconds_views:.1f} s, review queue rebuilt in "
                f"{seeded.seconds_queue:.1f} s"
            )
            _vacuumed(database.location.conninfo)
            queue = runtime.queue
            assert queue is not None  # noqa: S101 - bench_runtime always wires it
            deep = queue.select(TENANT, QueueFilter(), limit=seeded.tally.total * 9 // 10)[
                -1
            ].position
            scenarios = _scenarios(seeded, deep)
            if compare_rounds:
                load_before = load_average()
                with structlog.testing.capture_logs():
                    compared, profiled = compare(
                        runtime,
                        TENANT,
                        _cases(seeded, deep),
                        rounds=compare_rounds,
                        profile=profile,
                    )
                console.print(_compared_table(compared, compare_rounds))
                console.print(f"load average {load_before} before, {load_average()} after")
                if profiled:
                    console.print(profiled, markup=False, highlight=False)
            # The deep page states the whole queue's count too (it is not filtered).
            app = create_app(ports=runtime, auth=auth, rate_limit=RateLimitSettings(enabled=False))
            token = mint_token(
                auth, TokenRequest(role=Role.REVIEWER, tenant=TENANT, principal_id="bench-reviewer")
            )
            if explain:
                for plan in plans(
                    database.location.conninfo, VIEWS_SCHEMA, TENANT, _cases(seeded, deep)
                ):
                    console.print(f"[bold]{plan.case}[/bold], statement {plan.statement}")
                    for line in plan.lines:
                        console.print(f"  {line}", markup=False, highlight=False)
                console.print(_kept_table(database.location.conninfo, _cases(seeded, deep)))
            if not pages:
                return
            apps = {"product": app}
            if side_by_side:
                apps[BEFORE] = _before_app(runtime, auth)
            with ExitStack() as stack, structlog.testing.capture_logs():
                urls = {name: stack.enter_context(served(a)) for name, a in apps.items()}
                load_before = load_average()
                by_variant = time_pages(urls, token, scenarios, runs=runs)
                load_after = load_average()
        for name, variant in by_variant.items():
            console.print(_table(variant, runs, name))
        if side_by_side:
            console.print(_side_by_side(by_variant[BEFORE], by_variant["product"], COMPARED))
        timed = by_variant["product"]
        worst = max(t.p95 for t in timed)
        console.print(
            f"load average {load_before} before, {load_after} after; worst p95 {worst:.0f} ms "
            f"(budget {BUDGET_MS:.0f} ms): {'met' if worst < BUDGET_MS else 'NOT met'}; counts "
            f"{'all exact' if all(t.exact for t in timed) else 'NOT all exact'}"
        )
        if not all(t.exact for t in timed):
            raise typer.Exit(1)
    finally:
        database.stop()
