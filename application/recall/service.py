"""Recall: what an agent gets at the start of a session and on every turn, within a budget.

- Lookups run concurrently and stop at the deadline; recall FAILS OPEN: on timeout, backend
  error or memory disabled it returns what it has with a `degraded` reason, never an error.
- Only confirmed profile fields are facts; open proposals are offered as things to ask.
- Output is notes, not quotations (see `notes`); verbatim excerpts only when the tenant's
  policy opts in (`excerpts`), attributed and in a field of their own.
- The budget counts from the request's arrival (`arrived_at`, `time.monotonic()`), so time
  spent queueing before recall starts is part of it; with too little left, recall answers at
  once with `overloaded` instead of late.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from uuid import UUID

import structlog

from factledger.application.errors import MemoryNotFoundError
from factledger.application.memory.ports import MemoryBackend
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import (
    MAX_LIMIT,
    Capability,
    Namespace,
    SearchHit,
    SearchMode,
    SearchQuery,
)
from factledger.application.recall.asked import (
    held_fields,
    note_of,
    offered_pending,
    other_pending,
)
from factledger.application.recall.build import (
    LedgerFindings,
    MemoryFindings,
    evidence_session_ids,
    excerpts,
    hit_session_id,
    memory_notes,
    profile_notes,
    proposal_notes,
    session_notes,
    superseded_ids,
)
from factledger.application.recall.deadline import (
    Lookup,
    LookupDegraded,
    budget_left,
    lookup_time,
    run_within,
    too_late_to_start,
    worst,
)
from factledger.application.recall.decided import decided_first
from factledger.application.recall.forget_filter import (
    NOTHING_FORGOTTEN,
    ForgetMask,
    Traces,
    remembered,
    unforgotten,
)
from factledger.application.recall.later import (
    UNDER_ROWS,
    from_later,
    later_statement,
    said_at,
    split_under,
)
from factledger.application.recall.others import own_rows
from factledger.application.recall.outdated import not_outdated
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.ports import (
    AskedFields,
    ForgetSource,
    MemoryStatements,
    RecallSources,
    TurnSource,
)
from factledger.application.recall.sources import OpenProposal
from factledger.application.recall.turn_reads import turn_source
from factledger.application.recall.types import (
    Degraded,
    Excerpt,
    Note,
    RecallResult,
    SessionContext,
)
from factledger.application.recall.under import candidate_rows, filling_rows

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RecallPorts:
    """What recall reads: the memory backend (None when none is configured), the ledger's
    read side and the per-tenant policies."""

    backend: MemoryBackend | None
    sources: RecallSources
    policies: RecallPolicies
    # The ledger's forgets, applied before the backend learns of them (`recall.forget_filter`);
    # None only where nothing is forgotten outside the backend (benchmarks, fixed sources).
    forgets: ForgetSource | None = None
    # The profile and the forgets of a turn from one read of the subject; None: recall reads
    # them through `sources` and `forgets`.
    turns: TurnSource | None = None
    # Which profile field a turn's question asks about, read per subject kind (`recall.asked`);
    # None: only the words of the question name a field.
    asked_fields: AskedFields | None = None
    # Whom a memory speaks of, read when the policy withholds third parties' facts
    # (`recall.others`); None: every memory is served as the subject's.
    statements: MemoryStatements | None = None


class Recall:
    """`session_context` (budget 2 s) and `recall` (budget 1 s), awaitable alongside the
    agent's other retrieval (e.g. in an `asyncio.gather`)."""

    def __init__(self, ports: RecallPorts) -> None:
        self._ports = ports
        self._turns = turn_source(ports.sources, ports.forgets, ports.turns)
        self._traces = Traces()  # slots of memories the forget mask had to look up

    @property
    def ports(self) -> RecallPorts:
        """What this recall reads (a bench composes one like it around a timed part)."""
        return self._ports

    def budget_s(self, tenant: str | None, *, context: bool = False) -> float:
        """The tenant's budget for `recall` (or `session_context`)."""
        policy = self._ports.policies.for_tenant(tenant)
        return policy.context_budget_s if context else policy.recall_budget_s

    async def recall(
        self,
        subject_id: UUID,
        query: str,
        *,
        tenant: str | None = None,
        arrived_at: float | None = None,
    ) -> RecallResult:
        """Memories relevant to one turn: at most `limit` notes above `threshold`."""
        started = time.perf_counter()
        policy = self._ports.policies.for_tenant(tenant)
        if not policy.enabled or self._ports.backend is None:
            return self._served(RecallResult(degraded=Degraded.DISABLED), subject_id, started)
        left = budget_left(policy.recall_budget_s, arrived_at)
        if too_late_to_start(policy.recall_budget_s, left):
            return self.unanswered(subject_id, Degraded.OVERLOADED)
        findings, ledger = MemoryFindings(), LedgerFindings()
        # The confirmed facts and the forgets are read once, beside the search, in its lookup.
        lookups = [self._memory_lookup(subject_id, query, policy, findings, ledger)]
        failures = await run_within(lookup_time(policy.recall_budget_s, left), lookups)
        result = RecallResult(
            notes=_decided_first(query, findings, ledger, policy.limit, failures),
            excerpts=_excerpts(findings, policy),
            degraded=worst(failures),
        )
        return self._served(result, subject_id, started)

    async def session_context(
        self,
        subject_id: UUID,
        *,
        topic: str | None = None,
        tenant: str | None = None,
        arrived_at: float | None = None,
    ) -> SessionContext:
        """Confirmed profile, recent session summaries, open proposals and, when an opening
        topic is given, the memories relevant to it."""
        started = time.perf_counter()
        policy = self._ports.policies.for_tenant(tenant)
        if not policy.enabled:
            return self._context_served(
                SessionContext(degraded=Degraded.DISABLED), subject_id, started
            )
        left = budget_left(policy.context_budget_s, arrived_at)
        if too_late_to_start(policy.context_budget_s, left):
            return self.unanswered_context(subject_id, Degraded.OVERLOADED)
        ledger, memories = LedgerFindings(), MemoryFindings()
        lookups = [
            Lookup(
                "profile", lambda: self._profile(subject_id, policy, ledger), Degraded.SOURCE_ERROR
            ),
            Lookup(
                "sessions", lambda: self._recent(subject_id, policy, ledger), Degraded.SOURCE_ERROR
            ),
        ]
        no_backend = self._ports.backend is None
        if topic and topic.strip() and not no_backend:
            lookups.append(self._memory_lookup(subject_id, topic, policy, memories))
        failures = await run_within(lookup_time(policy.context_budget_s, left), lookups)
        degraded = worst(failures) or (Degraded.DISABLED if no_backend and topic else None)
        context = SessionContext(
            profile=profile_notes(ledger),
            recent_sessions=session_notes(ledger.recent),
            memories=memory_notes(memories),
            to_confirm=proposal_notes(ledger),
            excerpts=_excerpts(memories, policy),
            degraded=degraded,
            degraded_lookups=tuple(sorted(failures)),
        )
        return self._context_served(context, subject_id, started)

    def unanswered(self, subject_id: UUID, reason: Degraded) -> RecallResult:
        """An empty recall answer that says why (shed under load, or the subject check could
        not finish within the budget)."""
        return self._served(RecallResult(degraded=reason), subject_id, time.perf_counter())

    def unanswered_context(self, subject_id: UUID, reason: Degraded) -> SessionContext:
        """An empty session context that says why (as `unanswered`)."""
        empty = SessionContext(degraded=reason)
        return self._context_served(empty, subject_id, time.perf_counter())

    # -- lookups: each stores what it has as soon as it has it --------------------------------

    def _memory_lookup(
        self,
        subject_id: UUID,
        text: str,
        policy: RecallPolicy,
        findings: MemoryFindings,
        ledger: LedgerFindings | None = None,
    ) -> Lookup:
        """The search with what it needs from the ledger beside it: the forgets, and for a
        turn (`ledger` given) the confirmed profile, from one read of the subject."""

        async def run() -> None:
            backend = self._ports.backend
            assert backend is not None  # noqa: S101 - callers check before building the lookup
            ns = namespace_for(subject_id)
            query = wide_query(text, policy)
            # Each task and wake-up is a turn of the event loop that a busy process may make
            # the answer wait for: the search runs in this lookup's own task, the ledger's read
            # in one task beside it, and the steps after it only when they have work.
            under: list[SearchHit] = []
            if ledger is not None:
                found, mask = await _beside(
                    self._search(backend, ns, _with_under(query), ledger),
                    self._turn(subject_id, ledger),
                )
                if query.mode is SearchMode.MEMORIES:
                    found, under = split_under(found, query.threshold, query.limit)
                ledger.asked = self._asked(ledger)
            elif self._ports.forgets is None:
                found, mask = await backend.search(ns, query), NOTHING_FORGOTTEN
            else:
                found, mask = await asyncio.gather(
                    backend.search(ns, query), self._mask(subject_id)
                )
            # A mask that cannot be read leaves no hits: never serve what may be forgotten.
            hits = await unforgotten(found, mask, backend, ns, self._traces)
            findings.mask = mask
            # Superseded facts that matched too give "previously ..." without a round trip.
            findings.previous.update({h.id: h.text for h in hits if not h.is_latest})
            wanted = [h for h in hits if h.is_latest or policy.include_superseded]
            findings.hits = wanted[: policy.limit]
            if ledger is not None and policy.withhold_third_parties:
                findings.hits = await self._own(findings.hits)
            if ledger is not None and under:
                await self._later(ledger, findings, under, backend, ns)
                if len(findings.hits) < policy.limit:
                    await self._under(findings, candidate_rows(under, policy.under_floor), ns)
                    if policy.withhold_third_parties:
                        findings.under = await self._own(findings.under)
            steps: list[Coroutine[object, object, None]] = []
            if _older_ids(findings):
                steps.append(self._previous(backend, subject_id, findings))
            if policy.excerpts:
                steps.append(self._transcripts(subject_id, findings))
            if len(steps) == 1:
                await steps[0]
            elif steps:
                results = await asyncio.gather(*steps, return_exceptions=True)
                for outcome in results:
                    if isinstance(outcome, BaseException):
                        raise outcome

        return Lookup("memories", run, Degraded.BACKEND_ERROR)

    async def _previous(
        self, backend: MemoryBackend, subject_id: UUID, findings: MemoryFindings
    ) -> None:
        ns = namespace_for(subject_id)
        provenance = Capability.FACT_PROVENANCE in backend.capabilities
        slots = Capability.FACT_SLOTS in backend.capabilities
        old_ids = _older_ids(findings)
        found = await asyncio.gather(
            *(backend.get_memory(ns, i) for i in old_ids), return_exceptions=True
        )
        for outcome in found:
            if isinstance(outcome, MemoryNotFoundError):
                continue  # dropped meanwhile: no history to show
            if isinstance(outcome, BaseException):
                raise outcome
            # A forgotten or rejected value never resurfaces as history, synced or not.
            if remembered(outcome, findings.mask, provenance=provenance, slots=slots):
                findings.previous[outcome.id] = outcome.text

    async def _mask(self, subject_id: UUID) -> ForgetMask:
        forgets = self._ports.forgets
        return NOTHING_FORGOTTEN if forgets is None else await forgets.mask(subject_id)

    async def _transcripts(self, subject_id: UUID, findings: MemoryFindings) -> None:
        ids = list(
            dict.fromkeys(s for h in findings.hits if h.source_indexes and (s := hit_session_id(h)))
        )
        sources = self._ports.sources
        transcripts = await asyncio.gather(*(sources.transcript(subject_id, i) for i in ids))
        findings.transcripts.update(zip(ids, transcripts, strict=True))

    async def _profile(
        self, subject_id: UUID, policy: RecallPolicy, ledger: LedgerFindings
    ) -> None:
        sources = self._ports.sources
        profile, proposals = await asyncio.gather(
            sources.confirmed_profile(subject_id),
            sources.open_proposals(subject_id, limit=policy.max_proposals),
        )
        ledger.profile = list(profile)  # confirmed, so facts even when a model inferred them
        ledger.proposals = list(proposals)
        evidence = evidence_session_ids(ledger.profile, ledger.proposals)
        if evidence:
            ledger.sessions.update(await sources.sessions(subject_id, evidence))

    async def _turn(self, subject_id: UUID, ledger: LedgerFindings) -> ForgetMask:
        """The turn's profile (stored as soon as read) and its mask; a failed read is the
        ledger's (`source_error`), and leaves no hits: never serve what may be forgotten."""
        try:
            turn = await self._turns.turn(subject_id)
        except Exception as error:
            raise LookupDegraded(Degraded.SOURCE_ERROR) from error
        ledger.profile = list(turn.profile)  # confirmed, so facts even when a model inferred them
        ledger.kind, ledger.proposals = turn.kind, list(turn.pending)
        return turn.mask

    async def _search(
        self, backend: MemoryBackend, ns: Namespace, query: SearchQuery, ledger: LedgerFindings
    ) -> list[SearchHit]:
        """A turn's search; with a reader of asked fields, over the query's vector embedded
        once, which the reader then reads the asked field from (`_asked`)."""
        reader = self._ports.asked_fields
        if reader is not None:
            ledger.vector = await reader.query_vector(query.text)
            if ledger.vector is not None:
                query = replace(query, vector=ledger.vector)
        return await backend.search(ns, query)

    def _asked(self, ledger: LedgerFindings) -> str | None:
        """The profile field the turn's question asks about, for the subject's kind: the
        field the heads are sure of; when they are sure of none, the most probable field the
        subject holds a value of (`recall.asked`)."""
        reader = self._ports.asked_fields
        if reader is None or ledger.kind is None or ledger.vector is None:
            return None
        kind, vector = ledger.kind, ledger.vector
        ledger.ranked = lambda: reader.ranked_fields(kind, vector)
        sure = reader.field_of(kind, vector)
        held = held_fields(ledger.proposals, ledger.profile)
        if sure is not None or not held:
            return sure
        return next((f for f in ledger.ranked() if f in held), None)

    async def _later(
        self,
        ledger: LedgerFindings,
        findings: MemoryFindings,
        under: list[SearchHit],
        backend: MemoryBackend,
        ns: Namespace,
    ) -> None:
        """The asked field's later statement under the threshold, when recall would offer
        the field's pending value said before it (`recall.later`); the rows under the
        threshold pass the forget mask only then."""
        reader, asked, kind, vector = (
            self._ports.asked_fields,
            ledger.asked,
            ledger.kind,
            ledger.vector,
        )
        # Only a field the heads are sure the question asks about: the most probable held
        # field taken when they are sure of none (`_asked`) is a guess, too weak to withhold
        # a value for.
        if reader is None or asked is None or kind is None or vector is None:
            return
        if reader.field_of(kind, vector) != asked:
            return
        since = said_at(_offered(ledger, findings.mask, findings.hits))
        if since is None:
            return
        # An optional reading: its failure leaves the turn as it was, never its memories.
        try:
            visible = await unforgotten(under, findings.mask, backend, ns, self._traces)
            ledger.later = await later_statement(reader, kind, asked, since, visible)
        except Exception as error:
            log.warning("recall.later_skipped", error_type=type(error).__name__)

    async def _under(self, findings: MemoryFindings, rows: list[SearchHit], ns: Namespace) -> None:
        """The rows under the threshold that may fill the turn's empty places, past the forget
        mask (`recall.under`); read only when the memories leave a place."""
        backend = self._ports.backend
        if not rows or backend is None:
            return
        # An optional reading: its failure leaves the turn as it was, never its memories.
        try:
            findings.under = await unforgotten(rows, findings.mask, backend, ns, self._traces)
        except Exception as error:
            log.warning("recall.under_skipped", error_type=type(error).__name__)

    async def _own(self, rows: list[SearchHit]) -> list[SearchHit]:
        """`rows` less the memories the statement head reads as a third party's fact
        (`recall.others`); as they were without a reader or when it fails."""
        reader = self._ports.statements
        if reader is None or not rows:
            return rows
        # An optional reading: its failure serves the rows as they were, never fewer.
        try:
            return await own_rows(reader, rows)
        except Exception as error:
            log.warning("recall.others_skipped", error_type=type(error).__name__, rows=len(rows))
            return rows

    async def _recent(self, subject_id: UUID, policy: RecallPolicy, ledger: LedgerFindings) -> None:
        recent = await self._ports.sources.recent_sessions(subject_id, limit=policy.recent_sessions)
        ledger.recent = list(recent)

    # -- logging: ids, counts and durations only ---------------------------------------------

    def _served(self, result: RecallResult, subject_id: UUID, started: float) -> RecallResult:
        elapsed = round((time.perf_counter() - started) * 1e3, 2)
        log.info(
            "recall.served",
            subject_id=str(subject_id),
            notes=len(result.notes),
            excerpts=len(result.excerpts),
            degraded=None if result.degraded is None else result.degraded.value,
            elapsed_ms=elapsed,
        )
        return RecallResult(result.notes, result.excerpts, result.degraded, elapsed)

    def _context_served(
        self, context: SessionContext, subject_id: UUID, started: float
    ) -> SessionContext:
        elapsed = round((time.perf_counter() - started) * 1e3, 2)
        log.info(
            "recall.context_served",
            subject_id=str(subject_id),
            profile_fields=len(context.profile),
            sessions=len(context.recent_sessions),
            memories=len(context.memories),
            to_confirm=len(context.to_confirm),
            degraded=None if context.degraded is None else context.degraded.value,
            degraded_lookups=list(context.degraded_lookups),
            elapsed_ms=elapsed,
        )
        return SessionContext(
            context.profile,
            context.recent_sessions,
            context.memories,
            context.to_confirm,
            context.excerpts,
            context.degraded,
            context.degraded_lookups,
            elapsed,
        )


async def _beside(
    search: Coroutine[object, object, list[SearchHit]],
    read: Coroutine[object, object, ForgetMask],
) -> tuple[list[SearchHit], ForgetMask]:
    """The search awaited in the caller's task and the read in one task beside it (`gather`
    would wrap both); the read is cancelled if the search fails."""
    reading = asyncio.ensure_future(read)
    try:
        found = await search
    except BaseException:
        reading.cancel()
        raise
    return found, await reading


def _decided_first(
    query: str,
    findings: MemoryFindings,
    ledger: LedgerFindings,
    limit: int,
    failures: Mapping[str, Degraded],
) -> tuple[Note, ...]:
    """Confirmed fields the turn asks about that no memory states, then the asked field's
    pending value (`recall.asked`), then the memories, those that agree with confirmed fields
    first (`recall.decided`), less those of earlier sessions that pending value outdated
    (`recall.outdated`); at most `limit`, the places left taken by the other held fields'
    pending values, then, where the policy sets a floor, by rows under the threshold
    (`recall.under`). Only over a finished search: a partial one serves what it found, as
    before."""
    asked, later = ledger.asked, ledger.later
    # A later statement of the asked field takes its earlier pending value's place.
    offered = () if later is not None else _offered(ledger, findings.mask, findings.hits)
    pending = tuple(note_of(p) for p in offered)
    if "memories" in failures:
        return memory_notes(findings)
    if not (ledger.profile or pending or later):
        notes = _filled(memory_notes(findings), findings, ledger, limit)
        return _under_filled(notes, findings, offered, later, limit)
    hits = (
        not_outdated(findings.hits, offered) if later is None else from_later(findings.hits, later)
    )
    ranked = decided_first(ledger.profile, query, hits, asked)
    kept = MemoryFindings(
        hits=list(ranked.hits),
        previous=findings.previous,
        transcripts=findings.transcripts,
        mask=findings.mask,
    )
    confirmed = profile_notes(LedgerFindings(profile=list(ranked.confirmed)))
    notes = (*confirmed, *pending, *memory_notes(kept))[:limit]
    notes = _filled(notes, findings, ledger, limit)
    return _under_filled(notes, findings, offered, later, limit)


def _with_under(query: SearchQuery) -> SearchQuery:
    """A turn's memories-mode search, also returning a few rows under the threshold: where a
    later statement of the asked field may be (`recall.later`). Other modes score by rank
    fusion, where the threshold is no score: they are searched as they are."""
    if query.mode is not SearchMode.MEMORIES:
        return query
    return replace(query, threshold=0.0, limit=min(MAX_LIMIT, query.limit + UNDER_ROWS))


def _offered(
    ledger: LedgerFindings, mask: ForgetMask, hits: Sequence[SearchHit]
) -> tuple[OpenProposal, ...]:
    """The asked field's pending values recall offers (`recall.asked`)."""
    if ledger.asked is None:
        return ()
    return offered_pending(
        ledger.asked, ledger.proposals, ledger.profile, mask.replaced, hits, mask.withheld_changes
    )


def _filled(
    notes: tuple[Note, ...], findings: MemoryFindings, ledger: LedgerFindings, limit: int
) -> tuple[Note, ...]:
    """The places the turn's notes leave empty, filled with the pending values of the other
    fields the subject holds, the most probable for the question first (`recall.asked`)."""
    if len(notes) >= limit or ledger.ranked is None or not ledger.proposals:
        return notes
    shown = {n.origin.ref for n in notes}
    more = other_pending(
        ledger.ranked(),
        ledger.asked,
        ledger.proposals,
        ledger.profile,
        findings.mask.replaced,
        findings.hits,
        findings.mask.withheld_changes,
    )
    return (*notes, *(n for n in more if n.origin.ref not in shown))[:limit]


def _under_filled(
    notes: tuple[Note, ...],
    findings: MemoryFindings,
    offered: Sequence[OpenProposal],
    later: SearchHit | None,
    limit: int,
) -> tuple[Note, ...]:
    """The places still empty, taken by the turn's rows under the threshold, best first, less
    what the turn withholds (`recall.under`)."""
    rows = filling_rows(
        findings.under,
        offered=offered,
        later=later,
        shown={n.origin.ref for n in notes},
        places=limit - len(notes),
    )
    if not rows:
        return notes
    filled = MemoryFindings(hits=rows, previous=findings.previous, mask=findings.mask)
    return (*notes, *memory_notes(filled))


def _older_ids(findings: MemoryFindings) -> list[str]:
    """The facts the hits replaced whose texts recall has yet to read (for "previously")."""
    return [
        i
        for i in dict.fromkeys(i for hit in findings.hits for i in superseded_ids(hit))
        if i not in findings.previous
    ]


def _excerpts(findings: MemoryFindings, policy: RecallPolicy) -> tuple[Excerpt, ...]:
    """Verbatim lines only for a tenant that opted in; notes never carry them."""
    return excerpts(findings, max_chars=policy.excerpt_chars) if policy.excerpts else ()


def wide_query(text: str, policy: RecallPolicy) -> SearchQuery:
    """The policy's query, also asking for superseded facts (dropped from the notes unless the
    policy includes them) so their texts can date the current ones."""
    return SearchQuery(
        text=text,
        mode=policy.mode,
        threshold=policy.threshold,
        limit=min(MAX_LIMIT, policy.limit * 3),
        include_inferred=policy.include_inferred,
        include_superseded=True,
    )
