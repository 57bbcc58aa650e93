"""The console as it read a page's evidence before its streams were read together: each
quoting subject loaded on its own (`Ledger.read_subject`), four side by side, each load
reading its keys as it met them. Kept in the lab as the baseline of the side-by-side run."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import cast
from uuid import UUID

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.ledger import Ledger
from factledger.domain.subject import Subject

STREAMS_AT_ONCE = 4  # as the console read them


class StreamByStream:
    """A `Ledger` whose `read_subjects` loads one subject per call; all else is the ledger's."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def __getattr__(self, name: str) -> object:
        return getattr(self._ledger, name)

    def read_subjects(self, tenant: str, subject_ids: Sequence[UUID]) -> dict[UUID, Subject]:
        ids = list(dict.fromkeys(subject_ids))
        if len(ids) < 2:
            return {sid: self._ledger.read_subject(tenant, sid) for sid in ids}
        context = contextvars.copy_context()

        def load(subject_id: UUID) -> Subject:
            return context.copy().run(self._ledger.read_subject, tenant, subject_id)

        with ThreadPoolExecutor(min(STREAMS_AT_ONCE, len(ids))) as pool:
            return dict(zip(ids, pool.map(load, ids), strict=True))


def stream_by_stream(runtime: Runtime) -> Runtime:
    """The same runtime, the console's evidence loaded one subject at a time."""
    return replace(runtime, ledger=cast("Ledger", StreamByStream(runtime.ledger)))
