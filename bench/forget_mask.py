"""What immediate forgetting costs recall: reading a subject's forgets from the ledger.

Recall reads the mask beside its search on every turn (`recall.forget_filter`), so its cost is on
the hot path. Timed here on the embedded default ledger (SQLite) for a subject who never
forgot anything, one who forgot a field (the story, plus `extra_sessions` sessions before
the forget), and the rebuild after a new event, which hashes the transcript id of every
session recorded before the forget. Thread hand-off (`asyncio.to_thread`) is not included.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import cast
from uuid import UUID

from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.sqlite.event_store import sqlite_env
from factledger.application.ledger.commands import RecordSession, RegisterSubject
from factledger.application.ledger.ledger import Ledger
from factledger.application.recall.forget_filter import NOTHING_FORGOTTEN
from factledger.application.recall.ledger_forget_source import LedgerForgets, mask_of
from factledger.domain.subject import Subject
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.drivers import run_story
from factledger.testing.story.script import KIND, REASON, TENANT
from factledger.testing.story.steps import forget


@dataclass(frozen=True, slots=True)
class Timing:
    case: str
    calls: int
    p50_ms: float
    p95_ms: float
    p99_ms: float


def _timed(case: str, calls: int, step: Callable[[], object]) -> Timing:
    for _ in range(min(50, calls)):
        step()  # warm the aggregate cache
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        step()
        samples.append((time.perf_counter() - started) * 1e3)
    cuts = statistics.quantiles(samples, n=100)
    return Timing(case, calls, round(cuts[49], 4), round(cuts[94], 4), round(cuts[98], 4))


def _sessions(ledger: Ledger, clock: ManualClock, subject_id: UUID, count: int) -> None:
    for n in range(count):
        clock.advance(timedelta(hours=1))
        ledger.record_session(
            RecordSession(
                TENANT,
                subject_id,
                f"extra-{n}",
                Channel.CHAT,
                clock.now(),
                clock.now(),
                (Message(Role.SUBJECT, f"Note number {n}.", clock.now()),),
            )
        )


def run(*, calls: int = 2000, extra_sessions: int = 100) -> list[Timing]:
    with tempfile.TemporaryDirectory(prefix="factledger-forget-mask-") as workdir:
        clock = ManualClock()
        ledger = Ledger(
            sqlite_env(Path(workdir) / "ledger.sqlite"), clock=clock, keys=InMemoryKeyStore()
        )
        try:
            story = run_story(ledger, clock, until="June")
            # The sessions come before the forget: a rebuild hashes each of their ids.
            _sessions(ledger, clock, story.subject_id, extra_sessions)
            forget(ledger, clock, story, REASON.field)
            plain = ledger.register_subject(RegisterSubject(TENANT, KIND, "never-forgot"))
            _sessions(ledger, clock, plain.subject_id, extra_sessions)
            forgets = LedgerForgets(ledger)
            if forgets.mask_now(plain.subject_id) is not NOTHING_FORGOTTEN:
                raise RuntimeError("a subject who never forgot has a mask")
            if not forgets.mask_now(story.subject_id).fields:
                raise RuntimeError("the story's forgotten field is missing from its mask")
            subject = cast("Subject", ledger.repository.get(story.subject_id))
            sessions = len(subject.sessions)
            plain_sessions = extra_sessions
            return [
                _timed(
                    f"never forgot ({plain_sessions} sessions)",
                    calls,
                    lambda: forgets.mask_now(plain.subject_id),
                ),
                _timed(
                    f"forgot a field, mask cached ({sessions} sessions)",
                    calls,
                    lambda: forgets.mask_now(story.subject_id),
                ),
                _timed(
                    f"forgot a field, mask rebuilt after a new event ({sessions} sessions)",
                    calls,
                    lambda: mask_of(subject),
                ),
            ]
        finally:
            ledger.close()


def render(timings: list[Timing]) -> str:
    lines = [
        "Forget mask read per recall (SQLite ledger, one thread; ms)",
        "",
        "| case | calls | p50 | p95 | p99 |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {t.case} | {t.calls} | {t.p50_ms} | {t.p95_ms} | {t.p99_ms} |" for t in timings]
    return "\n".join(lines)
