"""`ProfileReader` over a view store: the queries recall and the HTTP API call."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from factledger.application.errors import NotFoundError
from factledger.application.ledger.ports import ViewStore
from factledger.application.ledger.queries import (
    DEFAULT_CLOCK,
    Clock,
    FieldDiff,
    FieldHistoryEntry,
    ProfileVersion,
    SessionEntry,
    SubjectSummary,
)
from factledger.domain.values import JsonObject
from factledger.projections.profile.as_said import profile_as_said
from factledger.projections.profile.documents import (
    history_entry,
    profile_version,
    session_entry,
    subject_summary,
)
from factledger.projections.profile.shapes import version_key


class ViewStoreProfileReader:
    """Reads the documents `ProfileProjection` writes. Implements `ProfileReader`."""

    def __init__(self, store: ViewStore) -> None:
        self.store = store

    def _get(self, view: str, key: str) -> JsonObject | None:
        with self.store.read() as txn:
            return txn.get(view, key)

    def _scan(self, view: str, prefix: str) -> list[JsonObject]:
        with self.store.read() as txn:
            return [doc for _, doc in txn.scan(view, prefix)]

    def subject(self, tenant: str, subject_id: UUID) -> SubjectSummary:
        doc = self._get("subject", str(subject_id))
        if doc is None or doc.get("tenant") != tenant or not _live(doc):
            raise NotFoundError(f"subject {subject_id}")
        return subject_summary(doc)

    def subjects(self, tenant: str) -> list[SubjectSummary]:
        docs = (subject_summary(d) for d in self._scan("subject", "") if _live(d))
        # By kind and reference: the stored order is the ids', which are keyed and so say
        # nothing a reader could follow (nor the same from one deployment to the next).
        return sorted(
            (s for s in docs if s.tenant == tenant),
            key=lambda s: (s.kind, s.external_ref, str(s.subject_id)),
        )

    def current(self, tenant: str, subject_id: UUID) -> ProfileVersion:
        self.subject(tenant, subject_id)
        doc = self._get("profile", str(subject_id))
        if doc is None:
            raise NotFoundError(f"subject {subject_id}")
        return profile_version(doc)

    def current_many(self, tenant: str, subject_ids: Sequence[UUID]) -> dict[UUID, ProfileVersion]:
        keys = [str(sid) for sid in dict.fromkeys(subject_ids)]
        with self.store.read() as txn:
            subjects = txn.get_many("subject", keys)
            mine = [key for key, doc in subjects.items() if doc.get("tenant") == tenant]
            profiles = txn.get_many("profile", mine)
        return {UUID(key): profile_version(doc) for key, doc in profiles.items()}

    def version(self, tenant: str, subject_id: UUID, version: int) -> ProfileVersion:
        self.subject(tenant, subject_id)
        doc = self._get("version", version_key(str(subject_id), version))
        if doc is None:
            raise NotFoundError(f"subject {subject_id} version {version}")
        return profile_version(doc)

    def versions(self, tenant: str, subject_id: UUID) -> list[ProfileVersion]:
        self.subject(tenant, subject_id)
        return [profile_version(d) for d in self._scan("version", f"{subject_id}:")]

    def as_of(
        self, tenant: str, subject_id: UUID, at: datetime, clock: Clock = DEFAULT_CLOCK
    ) -> ProfileVersion:
        if clock is Clock.SAID:
            self.subject(tenant, subject_id)
            return profile_as_said(subject_id, self._scan("history", f"{subject_id}:"), at)
        # Versions are written in the ledger's order, so their `known_at` only grows.
        known = [v for v in self.versions(tenant, subject_id) if (v.known_at or v.at) <= at]
        if not known:
            raise NotFoundError(f"subject {subject_id} had no profile at that time")
        return known[-1]

    def diff_at(
        self,
        tenant: str,
        subject_id: UUID,
        older: datetime,
        newer: datetime,
        clock: Clock = DEFAULT_CLOCK,
    ) -> list[FieldDiff]:
        before, after = (self._at_or_empty(tenant, subject_id, t, clock) for t in (older, newer))
        return _field_diffs(before, after)

    def _at_or_empty(
        self, tenant: str, subject_id: UUID, at: datetime, clock: Clock
    ) -> ProfileVersion:
        try:
            return self.as_of(tenant, subject_id, at, clock)
        except NotFoundError:
            self.subject(tenant, subject_id)  # the subject exists, it was not known yet
            return ProfileVersion(subject_id, 0, at, "", {})

    def history(
        self, tenant: str, subject_id: UUID, field: str | None = None
    ) -> list[FieldHistoryEntry]:
        self.subject(tenant, subject_id)
        docs = self._scan("history", f"{subject_id}:")
        return [history_entry(d) for d in docs if field is None or d.get("field") == field]

    def diff(self, tenant: str, subject_id: UUID, older: int, newer: int) -> list[FieldDiff]:
        before = self.version(tenant, subject_id, older)
        return _field_diffs(before, self.version(tenant, subject_id, newer))

    def sessions(self, tenant: str, subject_id: UUID) -> list[SessionEntry]:
        self.subject(tenant, subject_id)
        return [session_entry(d) for d in self._scan("session", f"{subject_id}:")]


def _field_diffs(older: ProfileVersion, newer: ProfileVersion) -> list[FieldDiff]:
    """The fields whose value differs (another change set it), by name."""
    before, after = older.fields, newer.fields
    diffs = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        same = old is not None and new is not None and old.change_id == new.change_id
        if not same:
            diffs.append(FieldDiff(name, old, new))
    return diffs


def _live(subject: JsonObject) -> bool:
    """False for an erased subject the views have not caught up with (a rebuild under way):
    its registration, replayed after the erasure shredded the reference, stored None."""
    return subject.get("external_ref") is not None
