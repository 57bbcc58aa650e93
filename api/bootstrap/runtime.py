"""`Runtime`: every port of one process, wired by `compose`; `Needs`: which parts it opens.

The ledger and its read side are always there; the other parts are None when the process did
not ask for them (the HTTP routes that need a missing part answer 503).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.importing.positions import ImportPositions
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.ledger.ledger import Ledger
from factledger.application.ledger.ports import IdempotencyStore, ProfileReader, ViewStore
from factledger.application.memory.ports import MemoryBackend
from factledger.application.rate_limits import RateStore
from factledger.application.recall.service import Recall
from factledger.application.review_queue.ports import ReviewQueue
from factledger.application.sessions.ports import SafetyFilter, SessionBuffer
from factledger.application.sessions.short_term import ShortTermMemory
from factledger.application.sync.ports import SyncStore
from factledger.application.sync.worker import SyncWorker
from factledger.projections.follower import Follower
from factledger.projections.profile.projection import ProfileProjection
from factledger.projections.review_queue.projection import ReviewQueueProjection

if TYPE_CHECKING:  # the driver is imported only where a standby is configured
    from factledger.adapters.postgres.replay_position import ReplayPositions


@dataclass(frozen=True, slots=True)
class Runtime:
    """The ledger, its views and the follower that feeds them; then, as the process needs
    them, the memory backend, short-term memory, recall, the sync and the idempotency store."""

    ledger: Ledger
    views: ViewStore
    projection: ProfileProjection
    profiles: ProfileReader
    follower: Follower
    backend: MemoryBackend | None = None
    sessions: ShortTermMemory | None = None
    session_buffer: SessionBuffer | None = None
    recall: Recall | None = None
    sync_store: SyncStore | None = None
    sync_worker: SyncWorker | None = None  # None without a memory backend
    idempotency: IdempotencyStore | None = None  # shared by every API process
    imports: ImportPositions | None = None  # where each history import stands
    rate_store: RateStore | None = None  # the API's rate limits, shared by its processes
    # With a standby that serves reads: the primary's and the standby's WAL positions.
    replay: ReplayPositions | None = None
    # Screens messages and, through the field screening, summaries and proposals alike.
    safety: SafetyFilter = field(default_factory=DetectorSafetyFilter)
    # Classifies the subject's answers to the agent's questions; None when its heads could
    # not load, and then no conversation confirms anything (the changes stay pending).
    judge: SentenceJudge | None = None
    # The review queue's indexed rows (a projection of its own, fed by `follower`); None only
    # where a process was wired by hand without it, and then the queue's routes answer 503.
    queue: ReviewQueue | None = None
    queue_projection: ReviewQueueProjection | None = None

    def catch_up(self) -> int:
        """Brings every view up to the head of the log (call after a command to read it)."""
        return self.follower.catch_up()


@dataclass(frozen=True, slots=True)
class Needs:
    """The parts a process opens beyond the ledger, its keys and its views."""

    backend: bool = True  # the embedder, the memory backend and the sync worker
    sessions: bool = True  # the session buffer and short-term memory
    idempotency: bool = True  # the idempotency store the API processes share
    catch_up: bool = True  # bring the views to the head of the log on open
    run_sync: bool | None = None  # run the sync worker in this process; None: when its
    # store is in memory (a PostgreSQL store is served by `factledger worker` processes)
    imports: bool = True  # the history import's position store
    # Wake this process's sync worker when another process commits events (PostgreSQL's
    # LISTEN/NOTIFY); the worker's poll interval stays the fallback.
    listen_for_commits: bool = False
    # Keep the views following the log in a thread (`projections.live`), not only when read.
    live_views: bool = False
    rate_limits: bool = False  # the store the API processes count their rate limits in


API = Needs(live_views=True, rate_limits=True)
WORKER = Needs(
    sessions=False, idempotency=False, run_sync=False, imports=False, listen_for_commits=True
)
DEMO = Needs(idempotency=False, run_sync=False)  # the demo runs the sync by hand
# `factledger import`: it runs the sync itself when asked to wait for it (`backend`).
IMPORT = Needs(sessions=False, idempotency=False, run_sync=False)
