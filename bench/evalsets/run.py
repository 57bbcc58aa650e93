"""Plays the blind cases through the product, in process, as a deployment would run them.

One runtime on the embedded default's parts (the ledger and views in memory, the in-memory
memory backend with the default ONNX embedder, the sync worker run by hand) with the six
domains' kinds configured in `profile_schemas` as bare types. For each case: register the
subject, then per session record it, let the sync worker run (the product's own proposer
reviews the session, the backend ingests it), apply the reviewer decisions that follow the
session, sync again and ask the session's questions through per-turn recall.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.judgement import answer_judge, screened_messages
from factledger.api.bootstrap.runtime import Needs, Runtime
from factledger.api.settings import load_settings
from factledger.application.ledger.commands import (
    ApproveChange,
    RecordSession,
    RegisterSubject,
    RejectChange,
)
from factledger.application.sessions.ports import SafetyFilter
from factledger.bench.evalsets.cases import Case, bare_schemas, named_schemas
from factledger.bench.proposal_eval import Made
from factledger.domain.errors import StaleChangeError
from factledger.domain.provenance import Actor, ActorKind, ChangeStatus
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

TENANT = "blind"
NOTES = 3
_CHANNELS = {
    "phone": Channel.VOICE,
    "voice": Channel.VOICE,
    "email": Channel.EMAIL,
    "whatsapp": Channel.WHATSAPP,
    "chat": Channel.CHAT,
    "sms": Channel.SMS,
}
_ROLES = {"agent": Role.AGENT, "subject": Role.SUBJECT, "staff": Role.STAFF}
REVIEWER = Actor(ActorKind.STAFF, "blind-reviewer")
SYNC_PASSES = 4  # a pass proposes; the next syncs what the proposals recorded


@dataclass(frozen=True, slots=True)
class Asked:
    session: int
    index: int  # the question's index within its session
    notes: tuple[str, ...]  # the first three notes recall gave, as text


@dataclass(slots=True)
class CaseRun:
    case: Case
    made: list[Made] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    # Session -> the indexes of its lines the session path's screen withheld (`--as-served`):
    # never recorded, so never read for a request to forget either.
    withheld: dict[int, frozenset[int]] = field(default_factory=dict)


def blind_settings(
    data_dir: Path,
    extractor: dict[str, Any] | None,
    schema: str,
    proposals: dict[str, Any] | None = None,
) -> Any:
    overrides: dict[str, Any] = {
        "data_dir": data_dir,
        "event_store": {"kind": "memory"},
        "views": {"kind": "memory"},
        "short_term": {"kind": "memory"},
        "backend": {"kind": "in_memory"},
        "profile_schemas": _schemas(schema),
    }
    if extractor is not None:
        overrides["extractor"] = extractor
    if proposals is not None:
        overrides["proposals"] = proposals
    return load_settings(**overrides)


def _schemas(schema: str) -> dict[str, Any]:
    match schema:
        case "bare":
            return bare_schemas()
        case "named":
            return named_schemas()
        case _:  # "none": every kind as a deployment that configured nothing finds it
            return {}


def add_agreement_option(parser: argparse.ArgumentParser) -> None:
    """`--agreement`: the learned extractor's QA reader keeps answers under its floor where
    the heads agree (ADR 0122; off in the product's default since its merge)."""
    parser.add_argument(
        "--agreement",
        action="store_true",
        help="keep the QA reader's answers under its floor where the heads agree (ADR 0122)",
    )


async def _sync(runtime: Runtime) -> None:
    worker = runtime.sync_worker
    if worker is None:
        raise RuntimeError("the blind run needs the sync worker")
    for _ in range(SYNC_PASSES):
        report = await worker.run_once()
        if report.fed == 0 and report.done == 0:
            return


def _decide(runtime: Runtime, case: Case, subject_id: Any, session: int) -> None:
    for review in (r for r in case.reviews if r.after_session == session):
        subject = runtime.ledger.subject(TENANT, subject_id)
        pending = [
            c
            for c in subject.changes.values()
            if c.field == review.field and c.status is ChangeStatus.PENDING
        ]
        for change in pending:
            if review.approve:
                try:
                    runtime.ledger.approve_change(
                        ApproveChange(TENANT, subject_id, change.change_id, REVIEWER.id)
                    )
                except StaleChangeError:
                    # Two pending changes of one field read against the same version: the
                    # first approved, the second is stale, as it would be in the console.
                    continue
            else:
                runtime.ledger.reject_change(
                    RejectChange(TENANT, subject_id, change.change_id, REVIEWER, "reviewer")
                )


async def run_case(
    runtime: Runtime, clock: ManualClock, case: Case, safety: SafetyFilter | None = None
) -> CaseRun:
    """Plays the case; with `safety`, each line is screened first as the session path
    screens it, and a line it withholds is never recorded (the HTTP path's loss)."""
    run = CaseRun(case)
    clock.set(case.sessions[0].at)  # cases are played one after another, each in its own time
    subject_id = runtime.ledger.register_subject(
        RegisterSubject(TENANT, case.kind, f"{case.writer}-{case.id}")
    ).subject_id
    for n, session in enumerate(case.sessions):
        clock.set(max(session.at, clock.now()))  # a set's dates out of order stay recordable
        transcript = tuple(Message(_ROLES[r], t, session.at) for r, t in session.lines)
        if safety is not None:
            verdicts = [(await safety.screen(m)).allowed for m in transcript]
            run.withheld[n] = frozenset(i for i, kept in enumerate(verdicts) if not kept)
            transcript = tuple(m for m, kept in zip(transcript, verdicts, strict=True) if kept)
        before = set(runtime.ledger.subject(TENANT, subject_id).changes)
        runtime.ledger.record_session(
            RecordSession(
                TENANT,
                subject_id,
                f"{case.writer}-{case.id}-s{n}",
                _CHANNELS.get(session.channel, Channel.CHAT),
                session.at,
                session.at,
                transcript,
            )
        )
        await _sync(runtime)
        subject = runtime.ledger.subject(TENANT, subject_id)
        run.made += [Made(n, c.proposal) for i, c in subject.changes.items() if i not in before]
        _decide(runtime, case, subject_id, n)
        await _sync(runtime)
        recall = runtime.recall
        if recall is None:
            raise RuntimeError("the blind run needs recall")
        for q, question in enumerate(session.questions):
            turn = await recall.recall(subject_id, question.text, tenant=TENANT)
            run.asked.append(Asked(n, q, tuple(note.text for note in turn.notes[:NOTES])))
    return run


async def run_cases(
    cases: Sequence[Case],
    *,
    extractor: dict[str, Any] | None = None,
    schema: str = "bare",
    proposals: dict[str, Any] | None = None,
    as_served: bool = False,
) -> list[CaseRun]:
    clock = ManualClock(min(s.at for c in cases for s in c.sessions))
    needs = Needs(sessions=False, idempotency=False, run_sync=False, imports=False)
    with tempfile.TemporaryDirectory(prefix="factledger-blind-") as data_dir:
        settings = blind_settings(Path(data_dir), extractor, schema, proposals)
        async with open_runtime(settings, needs, clock=clock) as runtime:
            safety = (
                screened_messages(
                    runtime.safety,
                    answer_judge(settings.extractor, settings.extraction),
                    settings.safety,
                )
                if as_served
                else None
            )
            return [await run_case(runtime, clock, case, safety) for case in cases]
