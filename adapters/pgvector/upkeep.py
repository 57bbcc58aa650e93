"""Owner-run upkeep of the pgvector backend (split from `backend.py`): pruning erased rows at
once, compacting the tables erased from on the compaction round, and the partial
HNSW indexes of large namespaces (`ann.py`)."""

from __future__ import annotations

import structlog

from factledger.adapters.pgvector import memories as memories
from factledger.adapters.pgvector.ann import AnnReport, AnnSettings, maintain_ann_indexes
from factledger.adapters.pgvector.config import PgvectorConfig
from factledger.adapters.pgvector.connection import port_errors
from factledger.adapters.pgvector.vacuum import compact_tables, vacuum_tables

log = structlog.get_logger(__name__)

# Long enough for a writer's short transaction to end, short enough that writers queued behind
# a waiting rewrite barely notice it.
COMPACTION_LOCK_TIMEOUT_MS = 2_000


class PgvectorUpkeep:
    """Remembers which tables this process erased from, until they are compacted."""

    def __init__(self, config: PgvectorConfig) -> None:
        self.config = config
        self._erased: set[str] = set()  # tables erased from since the last compaction

    async def vacuum(self, *tables: str) -> None:
        """Erased rows are pruned now, not at the next autovacuum; the next
        `compact_erased` removes what the pages' free space still holds of them."""
        self._erased.update(tables)
        with port_errors("vacuum"):
            await vacuum_tables(self.config.admin_conninfo, self.config.schema, tables)

    @property
    def pending(self) -> tuple[str, ...]:
        """The tables erased from and not yet compacted."""
        return tuple(sorted(self._erased))

    async def compact_erased(
        self, *, every_table: bool = False, lock_timeout_ms: int = COMPACTION_LOCK_TIMEOUT_MS
    ) -> tuple[str, ...]:
        """Rewrites the tables this process erased rows from since its last compaction (every
        table of the backend with `every_table`, e.g. from another process), as their owner;
        returns the tables rewritten. A table whose lock is not free within `lock_timeout_ms`
        stays pending for the next round rather than holding up the writers queued behind it
        (`vacuum.py`). The worker runs it on its compaction round."""
        every = (*memories.NAMESPACE_TABLES, *memories.DERIVED_TABLES)
        chosen = every if every_table else tuple(sorted(self._erased))
        self._erased.difference_update(chosen)
        try:
            with port_errors("compact"):
                busy = await compact_tables(
                    self.config.admin_conninfo,
                    self.config.schema,
                    chosen,
                    lock_timeout_ms=lock_timeout_ms,
                )
        except BaseException:
            self._erased.update(chosen)  # the next round tries again
            raise
        self._erased.update(busy)
        done = tuple(t for t in chosen if t not in busy)
        log.info("pgvector.erased_compacted", tables=len(done), busy=len(busy))
        return done

    async def maintain_ann_indexes(self, settings: AnnSettings | None = None) -> AnnReport:
        with port_errors("maintain_ann_indexes"):
            return await maintain_ann_indexes(self.config, settings)
