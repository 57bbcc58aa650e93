"""`factledger-lab pgvector contact-centre`: recall where most subjects are met once.

A contact centre's traffic: thousands of subjects of a hundred facts each, most searched in
one conversation and never again in the process's life, and a conversation's turns searching
its subject several times. The queries come as conversations: each takes a subject no earlier
conversation took, so a conversation's first turn is its namespace's first search in the
process, and the turn counts are drawn so that most searches are such first turns.

Ways of answering, timed in alternating blocks of conversations over the same conversations,
each way with backends of its own (so each meets every namespace cold), embedding included:

- the floor: the query embedding plus the bare exact search (`ORDER BY embedding <=> q
  LIMIT k` in the namespace, bound and prepared as a search is): what no search of a namespace
  without a mirror can undercut;
- the database's search alone (mirrors off);
- the search with mirrors earned at the n-th search of a namespace whatever its size, for each
  n asked (1: every namespace loads at its first search, as before mirrors had to be earned);
- the default search (mirrors earned as `MirrorSettings` says: ADR 0225 by size);
- `Recall.recall` over the default search (no ledger behind it), beside the same search
  called directly on a backend of its own, to show what recall adds around the search.

Each way's figures are split into first turns and later turns; its CPU per call counts the
bench process (background mirror loads included) and the server's processes.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
from factledger.adapters.pgvector.bulk import BulkFact, bulk_load_facts
from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.pgvector.mirror.cache import MirrorSettings
from factledger.adapters.pgvector.prepared_search import run_prepared
from factledger.application.clocks import SystemClock
from factledger.application.memory.lexical import lexical_terms
from factledger.application.memory.ports import Embedder, Vectors
from factledger.application.memory.record_ids import namespace_for
from factledger.application.memory.types import MAX_LIMIT, Namespace, SearchQuery
from factledger.application.recall.policy import RecallPolicies, RecallPolicy
from factledger.application.recall.service import Recall, RecallPorts
from factledger.bench.ledgerless_sources import LedgerlessSources
from factledger.bench.pgvector.data import question, sentence_pool
from factledger.bench.pgvector.measure import ListExtractor, percentiles

# Turns per conversation and their weights: mean 1.9 turns, so about 53% of searches are a
# conversation's first (its namespace's first in the process), and a third of conversations
# search their subject 2-6 times.
TURN_WEIGHTS = {1: 7, 2: 1, 4: 1, 6: 1}
BLOCK_CONVERSATIONS = 10  # conversations per turn of the alternation
WARM_UP = 20  # untimed calls per way before the conversations
POLICY = RecallPolicy(threshold=0.0)  # raw scores here: no calibration table in between
# The bare exact search: the namespace's nearest facts, nothing else.
_FLOOR = b"SELECT id FROM memories WHERE namespace=%(ns)s ORDER BY embedding <=> %(vec)b LIMIT 9"


@dataclass(frozen=True, slots=True)
class ContactCentreOptions:
    subjects: int = 1_000
    facts: int = 100
    queries: int = 600
    pool: int = 12_000
    seed: int = 7
    earn_after: tuple[int, ...] = (1, 2)
    vectors_cache: Path | None = None
    # `--served`: the `factledger` executable to serve with (another build's, measured beside
    # this one's in one session); None: this install's.
    serve_with: Path | None = None
    # `--served`: another build's `factledger`, served beside the first over the same data and
    # timed in the same blocks (each build's recall and `/healthz` ways alternating).
    served_beside: Path | None = None
    # In process: `Recall.recall` as served again on a runtime of its own, with these keys of
    # the recall policy replaced (`{"under_floor": null}`: ADR 0150's fill off), timed in the
    # same blocks as the default; None: no such way.
    beside_policy: Mapping[str, object] | None = None
    # In process: the default ways' `MirrorSettings.facts_per_search` (None: any size).
    facts_per_search: int | None = MirrorSettings().facts_per_search


@dataclass(slots=True)
class Way:
    """Timings (ms, embedding included) of one way of answering, by turn."""

    name: str
    firsts: list[float] = field(default_factory=list)
    later: list[float] = field(default_factory=list)
    client_cpu_s: float = 0.0
    server_cpu_s: float = 0.0
    loads: Callable[[], int] = lambda: 0
    degraded: int = 0  # recalls that came back degraded (over the budget on a busy machine)

    @property
    def timings(self) -> list[float]:
        return self.firsts + self.later


Turn = tuple[uuid.UUID, str]
Conversation = list[Turn]
Call = Callable[[uuid.UUID, str], Awaitable[None]]


def conversations(
    subjects: list[uuid.UUID], facts: dict[uuid.UUID, list[str]], queries: int, rnd: random.Random
) -> list[Conversation]:
    """Conversations of `TURN_WEIGHTS` turns, each on a subject no earlier one took, until
    `queries` turns (or every subject) are used."""
    counts, weights = list(TURN_WEIGHTS), list(TURN_WEIGHTS.values())
    order = rnd.sample(subjects, len(subjects))
    out: list[Conversation] = []
    total = 0
    for subject in order:
        if total >= queries:
            break
        turns = min(rnd.choices(counts, weights)[0], queries - total)
        out.append([(subject, question(rnd.choice(facts[subject]), rnd)) for _ in range(turns)])
        total += turns
    return out


@dataclass(frozen=True, slots=True)
class Planned:
    """The workload of one run: the sentence pool and its vectors, the subjects, the pool's
    sentences each subject holds, and the conversations."""

    pool: list[str]
    vectors: Vectors
    subjects: list[uuid.UUID]
    picked: dict[uuid.UUID, list[int]]
    talks: list[Conversation]

    def line(self, options: ContactCentreOptions) -> str:
        turns = sum(len(c) for c in self.talks)
        return (
            f"workload: {options.subjects:,} subjects x {options.facts} facts; "
            f"{len(self.talks)} conversations, {turns} searches, "
            f"{len(self.talks) / turns:.0%} of them a namespace's first"
        )


async def plan(options: ContactCentreOptions, real: Embedder) -> Planned:
    """The same subjects, facts and conversations for a seed, in process or served."""
    rnd = random.Random(options.seed)
    pool = sentence_pool(options.pool, options.seed)
    vectors = await pool_vectors(pool, real, options)
    subjects = [uuid.UUID(int=rnd.getrandbits(128)) for _ in range(options.subjects)]
    picked = {s: rnd.sample(range(len(pool)), options.facts) for s in subjects}
    talks = conversations(
        subjects, {s: [pool[i] for i in p] for s, p in picked.items()}, options.queries, rnd
    )
    return Planned(pool, vectors, subjects, picked, talks)


async def opening(
    options: ContactCentreOptions, real: Embedder, echo: Callable[[str], None]
) -> tuple[list[str], Planned]:
    """The workload planned, and the report's first lines (the load, the workload) echoed."""
    lines = [load_line("start")]
    echo(lines[-1])
    planned = await plan(options, real)
    lines.append(planned.line(options))
    echo(lines[-1])
    return lines, planned


async def load_facts(
    config: PgvectorConfig,
    planned: Planned,
    namespace_of: Callable[[uuid.UUID], Namespace],
) -> str:
    """COPYs each subject's facts into `namespace_of(subject)`; says how long it took."""
    started = time.perf_counter()
    rows = await bulk_load_facts(config, _rows(planned, namespace_of))
    return f"loaded {rows:,} facts in {time.perf_counter() - started:.1f} s (COPY)"


async def open_backend(
    config: PgvectorConfig, embedder: Embedder, mirror: MirrorSettings
) -> PgvectorMemoryBackend:
    config = replace(config, search=replace(config.search, mirror=mirror))
    return await PgvectorMemoryBackend.open(
        config, embedder=embedder, extractor=ListExtractor(), clock=SystemClock()
    )


def turn_query(text: str) -> SearchQuery:
    """What `Recall.recall` asks of the backend for one turn under `POLICY`."""
    return SearchQuery(
        text=text,
        mode=POLICY.mode,
        threshold=POLICY.threshold,
        limit=min(MAX_LIMIT, POLICY.limit * 3),
        include_inferred=POLICY.include_inferred,
        include_superseded=True,
    )


def floor_way(
    backend: PgvectorMemoryBackend,
    embedder: Embedder,
    namespace_of: Callable[[uuid.UUID], Namespace] = namespace_for,
) -> tuple[Way, Call]:
    """The floor; `namespace_of` names the namespace a subject's facts were loaded into."""

    async def call(subject: uuid.UUID, text: str) -> None:
        vector = (await embedder.embed([text]))[0]
        ns = namespace_of(subject)
        args = {"ns": ns, "vec": vector}
        await backend.db.one_statement(
            lambda conn: run_prepared(conn, ns, _FLOOR, args, ef_search=None)
        )

    return Way("floor (embedding + bare exact search)"), call


def searching_way(name: str, backend: PgvectorMemoryBackend) -> tuple[Way, Call]:
    async def call(subject: uuid.UUID, text: str) -> None:
        await backend.search(namespace_for(subject), turn_query(text))

    mirrors = backend.searcher.mirrors
    return Way(name, loads=lambda: mirrors.loads), call


def recalling_way(name: str, backend: PgvectorMemoryBackend) -> tuple[Way, Call]:
    recall = Recall(
        RecallPorts(backend=backend, sources=LedgerlessSources(), policies=RecallPolicies(POLICY))
    )

    mirrors = backend.searcher.mirrors
    way = Way(name, loads=lambda: mirrors.loads)

    async def call(subject: uuid.UUID, text: str) -> None:
        result = await recall.recall(subject, text)
        way.degraded += result.degraded is not None

    return way, call


async def warm_up(ways: list[tuple[Way, Call]], planned: Planned) -> None:
    """Each way's first calls (connections, the model's first run, code paths met once) on
    subjects no conversation takes, untimed: the conversations then meet a process that has
    served, and namespaces and subjects it has not."""
    talked = {subject for talk in planned.talks for subject, _ in talk}
    spare = [s for s in planned.subjects if s not in talked][:WARM_UP]
    for subject in spare:
        text = planned.pool[planned.picked[subject][0]]
        for _, call in ways:
            await call(subject, text)


async def alternate(
    ways: list[tuple[Way, Call]], talks: list[Conversation], server_cpu: Callable[[], float]
) -> None:
    """Each block of conversations is answered by every way in turn, each way first in turn;
    `server_cpu` reads the CPU seconds of the processes serving them (the bench's aside)."""
    for block_no, start in enumerate(range(0, len(talks), BLOCK_CONVERSATIONS)):
        block = talks[start : start + BLOCK_CONVERSATIONS]
        shift = block_no % len(ways)
        for way, call in ways[shift:] + ways[:shift]:
            client, server = time.process_time(), server_cpu()
            for talk in block:
                for n, (subject, text) in enumerate(talk):
                    t0 = time.perf_counter()
                    await call(subject, text)
                    (way.later if n else way.firsts).append((time.perf_counter() - t0) * 1e3)
            way.client_cpu_s += time.process_time() - client
            way.server_cpu_s += server_cpu() - server


def table(ways: list[Way]) -> list[str]:
    """Each way's figures by turn, and its ratios to the first way's (the floor's)."""
    floor = ways[0]
    floor_all, floor_first, floor_later = (
        percentiles(floor.timings)[1],
        percentiles(floor.firsts)[1],
        percentiles(floor.later)[1] if floor.later else 0.0,
    )
    head = (
        "| way | p50 / p95 ms, all | p95 first turns | p95 later turns | CPU per call, bench + "
        "server ms | loads | degraded | **p95 / floor p95** | first turns / floor's | "
        "later / floor's |"
    )
    out = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    for way in ways:
        p50, p95, _ = percentiles(way.timings)
        first = percentiles(way.firsts)[1]
        later = percentiles(way.later)[1] if way.later else 0.0
        calls = max(len(way.timings), 1)
        out.append(
            f"| {way.name} | {p50:.2f} / {p95:.2f} | {first:.2f} | {later:.2f} | "
            f"{way.client_cpu_s / calls * 1e3:.2f} + {way.server_cpu_s / calls * 1e3:.2f} | "
            f"{way.loads()} | {way.degraded} | **{p95 / floor_all:.2f}x** | "
            f"{first / floor_first:.2f}x | "
            f"{later / floor_later if floor_later else 0.0:.2f}x |"
        )
    return out


def _rows(planned: Planned, namespace_of: Callable[[uuid.UUID], Namespace]) -> list[BulkFact]:
    pool = planned.pool
    return [
        BulkFact(
            namespace_of(subject),
            f"{subject.hex}-{n}",
            pool[i],
            planned.vectors[i],
            terms=tuple(lexical_terms(pool[i], "", None)),
        )
        for subject, idx in planned.picked.items()
        for n, i in enumerate(idx)
    ]


async def pool_vectors(pool: list[str], real: Embedder, options: ContactCentreOptions) -> Vectors:
    cache = options.vectors_cache
    if cache is not None:
        cache = cache / f"pool-{real.model_id}-{options.seed}-{len(pool)}.npy"
        if cache.exists():
            loaded: Vectors = np.load(cache)
            return loaded
    vectors = await real.embed(pool)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
    return vectors


def load_line(when: str) -> str:
    one, five, _ = os.getloadavg()
    return (
        f"load average at the {when}: {one:.1f} (1 min), {five:.1f} (5 min), {os.cpu_count()} cores"
    )
