"""A queue page's server-side work timed in-process, two ways side by side in one run.

`per_row`: what the page did before its reads were batched (kept here, in the lab, as the
baseline): the queue's page, then each shown subject's current profile (one read each) and each
quoting subject's ledger stream, one after the other. `product`: the console's own
composition (`api.console.queue_view`, `api.console.subject_view`), whatever it does now. The
two are timed in alternating rounds over the same scenarios, so the machine's load falls on
both alike; with `profile`, the product's rounds run under cProfile and its top entries are
printed.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from uuid import UUID

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.queue_view import QUEUE_SHOWN, QueueItem, queue_groups, queue_page
from factledger.api.console.subject_view import evidence_context
from factledger.application.errors import NotFoundError
from factledger.application.ledger.queries import ProfileField
from factledger.application.review_queue.ports import ReviewQueue
from factledger.application.review_queue.queue import QueueCursor, QueueFilter
from factledger.domain.subject import Subject


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    where: QueueFilter
    cursor: QueueCursor = field(default_factory=QueueCursor)
    groups: bool = False


@dataclass(frozen=True, slots=True)
class Compared:
    case: Case
    per_row: list[float]  # ms
    product: list[float]

    @staticmethod
    def p95(values: list[float]) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    @property
    def ratio_p50(self) -> float:
        return statistics.median(self.per_row) / statistics.median(self.product)


def _per_row(runtime: Runtime, queue: ReviewQueue, tenant: str, case: Case) -> int:
    """The page as composed before: one profile read per shown subject, one stream load per
    quoting subject."""
    queue.choices(tenant)
    if case.groups:
        return len(queue.groups(tenant, case.where, offset=0, limit=50).groups)
    page = queue.page(tenant, case.where, case.cursor, QUEUE_SHOWN)
    fields: dict[UUID, dict[str, ProfileField]] = {}
    subjects: dict[UUID, Subject] = {}
    shown = 0
    for entry in page.entries:
        sid = entry.change.subject_id
        if sid not in fields:
            try:
                fields[sid] = dict(runtime.profiles.current(tenant, sid).fields)
            except NotFoundError:
                fields[sid] = {}
        if entry.change.evidence is not None:
            if sid not in subjects:
                subjects[sid] = runtime.ledger.subject(tenant, sid)
            evidence_context(subjects[sid], entry.change.evidence, around=2)
        shown += 1
    return shown


def _product(runtime: Runtime, queue: ReviewQueue, tenant: str, case: Case) -> int:
    """The console's route, without the HTTP and the template (the evidence in context is
    no longer on the page: ADR 0091)."""
    queue.choices(tenant)
    if case.groups:
        return len(queue_groups(queue, tenant, case.where, 0).groups)
    shown = queue_page(queue, runtime.profiles, tenant, case.where, case.cursor)
    items: list[QueueItem] = shown.items
    return len(items)


def compare(
    runtime: Runtime, tenant: str, cases: list[Case], *, rounds: int, profile: bool = False
) -> tuple[list[Compared], str]:
    queue = runtime.queue
    if queue is None:
        raise RuntimeError("the runtime has no review queue")
    profiler = cProfile.Profile() if profile else None
    results = []
    for case in cases:
        per_row: list[float] = []
        product: list[float] = []
        for _ in range(2):  # warm-up
            _per_row(runtime, queue, tenant, case)
            _product(runtime, queue, tenant, case)
        for _ in range(rounds):
            per_row.append(_timed(_per_row, runtime, queue, tenant, case))
            if profiler is not None:
                profiler.enable()
            product.append(_timed(_product, runtime, queue, tenant, case))
            if profiler is not None:
                profiler.disable()
        results.append(Compared(case, per_row, product))
    text = ""
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        text = out.getvalue()
    return results, text


def _timed(
    run: Callable[[Runtime, ReviewQueue, str, Case], int],
    runtime: Runtime,
    queue: ReviewQueue,
    tenant: str,
    case: Case,
) -> float:
    started = time.perf_counter()
    run(runtime, queue, tenant, case)
    return (time.perf_counter() - started) * 1000
