"""A PostgreSQL ledger with `subjects` subjects and `per_subject` pending proposals each, written
through the product's own store: subject aggregates built in memory with the domain's commands
(register, one recorded call, the proposals) and saved many at a time with `Ledger.save`, one
transaction per batch; the views and the review queue are then replayed from the log by their
own projections (`rebuild`), exactly as a live process would have built them.

Saving a batch of aggregates at once skips only what a request pays around a save (a load per
command, a round trip per event); the events, their encryption, the notification log and the
projections are the product's. Every count the pages must show is tallied here while
generating, independently of the queue's SQL.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from uuid import NAMESPACE_URL, uuid5

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.cipher import change_scope
from factledger.application.review_queue.queue import group_key
from factledger.bench.review_queue.runtime import PrimedKeys
from factledger.domain.proposal import Proposal
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.sessions import BEFORE_KEYS, SessionRecord
from factledger.domain.subject import Subject, legacy_subject_id
from factledger.domain.transcript import Channel, Message, Role
from factledger.domain.values import OPEN_SCHEMA, TextValue, to_payload

TENANT = "bench"
KINDS = ("lead", "customer", "supplier")
CONVERSATIONS = ("sales-call", "support-call", "onboarding-call")
MODEL = Actor(ActorKind.MODEL, "extractor-v1")
SUPPLIERS = ("Supplier A", "Supplier B", "Supplier C", "Supplier D")
INFERENCE = "price is an important factor"
# Inferred fields and how many distinct values each takes across subjects (1: identical for
# everyone, one group of `subjects` proposals).
INFERRED = (
    ("insights", 1),
    ("timeline", 4),
    ("decision_maker", 3),
    ("competitor", 5),
    ("pain_point", 6),
    ("region", 7),
    ("seats", 8),
    ("renewal", 12),
)
SAVE_BATCH = 50  # subjects (600 events) per transaction: well inside the idle timeout


@dataclass
class Tally:
    """What the seed wrote, counted as it went: the pages' counts must equal these."""

    total: int = 0
    by_field: Counter[str] = field(default_factory=Counter)
    by_origin: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    by_kind_origin: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_proposer: Counter[str] = field(default_factory=Counter)
    by_conversation: Counter[str] = field(default_factory=Counter)  # stated: the quoted call's
    by_group: Counter[str] = field(default_factory=Counter)
    by_ref_part: Counter[str] = field(default_factory=Counter)  # for one text search
    recorded: list[datetime] = field(default_factory=list)

    def add(self, kind: str, ref: str, p: Proposal, conversation: str | None, at: datetime) -> None:
        self.total += 1
        self.by_field[p.field] += 1
        self.by_origin[p.origin.value] += 1
        self.by_kind[kind] += 1
        self.by_kind_origin[kind, p.origin.value] += 1
        self.by_proposer[f"{p.proposed_by.kind.value}:{p.proposed_by.id}"] += 1
        if conversation is not None:
            self.by_conversation[conversation] += 1
        value = None if p.value is None else to_payload(p.value)
        self.by_group[
            group_key(p.field, p.operation.value, value, p.condition, p.origin.value)
        ] += 1
        if SEARCHED in ref or SEARCHED in p.field:
            self.by_ref_part[SEARCHED] += 1
        self.recorded.append(at)


SEARCHED = "crm-0042"  # the text search the bench times: ten subjects' references


@dataclass(frozen=True, slots=True)
class Seeded:
    tally: Tally
    seconds_writing: float
    seconds_views: float
    seconds_queue: float
    events: int


def kind_of(s: int) -> str:
    """The seed's `s`-th subject's kind (in turn)."""
    return KINDS[s % len(KINDS)]


def first_recorded_of_kind(tally: Tally, kind: str) -> list[datetime]:
    """When each subject of `kind` had its first proposal (its supplier) recorded, from the
    tally's record of every proposal in the order the seed made them (a subject's together,
    its supplier first)."""
    subjects = tally.by_field["supplier"]
    per_subject = tally.total // subjects
    return [tally.recorded[s * per_subject] for s in range(subjects) if kind_of(s) == kind]


def _subject(
    s: int, per_subject: int, said_at: datetime, recorded_at: datetime, tally: Tally
) -> Subject:
    kind, ref = kind_of(s), f"crm-{s:05d}"
    conversation = CONVERSATIONS[s % len(CONVERSATIONS)]
    supplier = SUPPLIERS[s % len(SUPPLIERS)]
    line = f"We buy from {supplier} and spend about {10 + s % 50}k a year."
    # Seeded straight into the store, as subjects registered before keyed ids were.
    subject = Subject.register(
        TENANT, kind, ref, at=recorded_at, subject_id=legacy_subject_id(TENANT, kind, ref)
    )
    session_id = f"call-{s:05d}"
    subject.record_session(
        SessionRecord(
            session_id,
            Channel.VOICE,
            said_at,
            said_at + timedelta(minutes=25),
            (
                Message(Role.AGENT, "Who supplies you today?", said_at),
                Message(Role.SUBJECT, line, said_at),
            ),
            conversation_type=conversation,
        ),
        at=recorded_at,
        fingerprint_key=BEFORE_KEYS,
    )
    agent = Actor(ActorKind.AGENT, f"agent-{s % 20}")
    stated = [
        ("supplier", supplier, supplier),
        ("budget", f"{10 + s % 50}k a year", f"{10 + s % 50}k a year"),
    ]
    proposals: list[tuple[Proposal, str | None]] = []
    for name, value, quote in stated:
        proposals.append(
            (
                Proposal(
                    uuid5(NAMESPACE_URL, f"bench:{s}:{name}"),
                    name,
                    Operation.SET,
                    TextValue(value),
                    Origin.STATED,
                    agent,
                    0,
                    evidence=Evidence(session_id, 1, quote),
                    rationale="said on the call",
                ),
                conversation,
            )
        )
    for name, distinct in INFERRED:
        value = INFERENCE if distinct == 1 else f"{name} {s % distinct}"
        proposals.append(
            (
                Proposal(
                    uuid5(NAMESPACE_URL, f"bench:{s}:{name}"),
                    name,
                    Operation.SET,
                    TextValue(value),
                    Origin.INFERRED,
                    MODEL,
                    0,
                    rationale="read between the lines",
                ),
                None,
            )
        )
    for proposal, quoted in proposals[:per_subject]:
        subject.propose(proposal, OPEN_SCHEMA, at=recorded_at)
        tally.add(kind, ref, proposal, quoted, recorded_at)
    return subject


def _scopes(subjects: list[Subject]) -> list[str]:
    """The key scopes the batch's events are sealed with: each subject's own (its sessions)
    and one per proposed change."""
    scopes = []
    for subject in subjects:
        scopes.append(str(subject.id))
        scopes.extend(change_scope(subject.id, change_id) for change_id in subject.changes)
    return scopes


def seed(
    runtime: Runtime, keys: PrimedKeys, *, subjects: int, per_subject: int, now: datetime
) -> Seeded:
    """Calls said over the past two years, their proposals recorded over the last 30 days (an
    import and its aftermath); views and queue rebuilt from the log afterwards."""
    if not 1 <= per_subject <= 2 + len(INFERRED):
        raise ValueError(f"per_subject: 1..{2 + len(INFERRED)}")
    tally, ledger = Tally(), runtime.ledger
    first_said, first_recorded = now - timedelta(days=730), now - timedelta(days=30)
    said_step = timedelta(days=700) / subjects
    recorded_step = timedelta(days=29) / subjects
    started = time.perf_counter()
    batch: list[Subject] = []
    for s in range(subjects):
        batch.append(
            _subject(
                s,
                per_subject,
                first_said + s * said_step,
                first_recorded + s * recorded_step,
                tally,
            )
        )
        if len(batch) == SAVE_BATCH:
            keys.prime(_scopes(batch))
            ledger.save(*batch)
            batch = []
    if batch:
        keys.prime(_scopes(batch))
        ledger.save(*batch)
    writing = time.perf_counter() - started
    started = time.perf_counter()
    events = runtime.projection.rebuild(ledger)
    views = time.perf_counter() - started
    queue = runtime.queue_projection
    if queue is None:
        raise RuntimeError("the runtime has no review queue")
    started = time.perf_counter()
    queue.rebuild(ledger)
    return Seeded(tally, writing, views, time.perf_counter() - started, events)


def utc_now() -> datetime:
    return datetime.now(UTC)
