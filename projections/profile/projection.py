"""The profile projection: subject events -> current profile, versions, history, queue, sessions.

Views (documents in one `ViewStore`, keys zero-padded so they sort):

| view | key | document |
| --- | --- | --- |
| subject | subject id | tenant, kind, external reference, current version |
| profile | subject id | the current profile: fields with provenance |
| version | subject id:version | every profile version, immutable JSON (forget redacts only) |
| history | subject id:position | one entry per field change (set/unset/append/forgotten/expiry) |
| change | subject id:change id | every proposal and its status (a superseded one names the newer) |
| queue | tenant:proposed at:position | pending proposals, oldest first |
| session | subject id:interaction number | the session index (counts, never text) |

A batch and the new position are written in one transaction, so a replay after a crash
changes nothing twice, and a dropped store rebuilt from position 0 equals the live one.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from eventsourcing.application import Application

from factledger.application.ledger.ports import ViewStore, ViewTransaction
from factledger.domain.events import (
    ChangeConfirmed,
    ChangeProposed,
    ChangeRejected,
    ChangeSuperseded,
    FactForgotten,
    FieldExpirySet,
    SessionRecorded,
    SubjectErased,
    SubjectRegistered,
)
from factledger.domain.proposal import apply_operation
from factledger.domain.provenance import Operation
from factledger.domain.values import (
    JsonObject,
    JsonValue,
    ListValue,
    from_payload,
    render,
    to_payload,
)
from factledger.projections.follower import PAGE, Follower, Tracked
from factledger.projections.gc_easing import garbage_collection_eased
from factledger.projections.profile.said import said_time
from factledger.projections.profile.shapes import (
    as_object,
    change_doc,
    redacted,
    session_doc,
)
from factledger.projections.profile.writes import (
    close_history,
    decide,
    erase_views,
    new_version,
    put_version,
    redact_field,
    strings,
)


def kept_entry(earlier: JsonObject, e: FactForgotten, version: int) -> JsonObject | None:
    """The profile's entry for the items a forget of others left (ADR 0160): standing as the
    field stood (`FactForgotten.kept_standing`), without the words that went (its evidence,
    condition, rationale and confirming words); None when the whole field went."""
    standing = e.kept_standing
    if not e.kept or standing is None:
        return None
    value = ListValue(tuple(e.kept))
    confirmed_at = standing.get("confirmed_at")
    entry: JsonObject = {
        "change_id": standing.get("change_id"),
        "condition": None,
        "origin": standing.get("origin"),
        "evidence": None,
        "rationale": None,
        "proposed_by": standing.get("proposed_by"),
        "operation": earlier.get("operation") or Operation.SET.value,
        "value": to_payload(value),
        "display": render(value),
        "confirmed_by": standing.get("confirmed_by"),
        "confirmation": None,
        "confirmed_at": earlier.get("confirmed_at") or confirmed_at,
        "said_at": earlier.get("said_at") or confirmed_at,
        "known_at": earlier.get("known_at") or confirmed_at,
        "version": version,
        **relayed(as_relay(standing.get("relayed_by"))),
    }
    if isinstance(until := standing.get("valid_until"), str):
        entry["valid_until"] = until
    return entry


def as_relay(payload: JsonValue) -> JsonObject | None:
    return payload if isinstance(payload, dict) else None


def relayed(relay: JsonObject | None) -> JsonObject:
    """Who relayed the subject's deciding words, only where someone did: documents of
    decisions recorded before relays were stay as they were written."""
    return {} if relay is None else {"relayed_by": relay}


VIEWS = ("subject", "profile", "version", "history", "change", "session")
# A rebuild's page where a server commits the views (ADR 0097): each page costs a handful of
# round trips and statements (the position locked, read and moved, the documents written,
# the commit, the next page's events and keys), and pages of 2,000 took 10-25% less of the
# client's and the server's CPU than pages of 500; SQLite's cost the same at any size.
SERVER_PAGE = 2_000


class ProfileProjection:
    """A `Processor` (see `projections.follower`) keeping the profile views of all subjects."""

    # The views keep a session's counts and times, never its words (see `Processor`).
    reads_transcript_text = False

    def __init__(self, store: ViewStore) -> None:
        self.store = store
        self.name = store.name
        # Subject id -> tenant, for one batch: a subject never changes tenant, and its record
        # was read back once per proposal (a twentieth of a rebuild).
        self._tenants: dict[str, str] = {}

    def position(self) -> int:
        return self.store.position()

    def dump(self) -> dict[str, list[tuple[str, JsonObject]]]:
        """Every document of every view (for rebuild checks and debugging)."""
        with self.store.read() as txn:
            return {view: txn.scan(view, "") for view in VIEWS}

    def rebuild(self, app: Application[UUID], *, page: int | None = None) -> int:
        """Drops every view and replays the whole log into them, `page` events per
        transaction (`PAGE`, or `SERVER_PAGE` where a server commits); returns events
        replayed."""
        self.store.drop()
        # The next page is read and decoded on a thread while a server commits this one; where
        # the commit is local (SQLite) there is no wait to overlap and the thread only costs
        # (figures in docs/benchmarks.md).
        read_ahead = getattr(self.store, "commits_on_a_server", False)
        if page is None:
            page = SERVER_PAGE if read_ahead else PAGE
        with garbage_collection_eased():
            return Follower(app, [self], page=page, read_ahead=read_ahead).catch_up()

    def process(self, batch: Sequence[Tracked]) -> None:
        self._tenants.clear()
        with self.store.transaction() as txn:
            for item in batch:
                if item.position > txn.position():
                    self._apply(txn, item)
            txn.advance(max(txn.position(), batch[-1].position))

    def _apply(self, txn: ViewTransaction, item: Tracked) -> None:
        event = item.event
        match event:
            case SubjectRegistered():
                self._tenants.pop(str(event.originator_id), None)
                self._registered(txn, event)
            case SessionRecorded():
                self._session(txn, event, item.position)
            case ChangeProposed():
                self._proposed(txn, event, item.position)
            case ChangeConfirmed():
                self._confirmed(txn, event, item.position)
            case ChangeRejected():
                self._rejected(txn, event)
            case ChangeSuperseded():
                self._superseded(txn, event)
            case FactForgotten() if event.field is not None:
                self._forgotten(txn, event, item.position)
                self._words_forgotten(txn, event)
            case FactForgotten():
                self._memory_forgotten(txn, event)
                self._words_forgotten(txn, event)
            case FieldExpirySet():
                self._expiry_set(txn, event, item.position)
            case SubjectErased():
                self._tenants.pop(str(event.originator_id), None)
                erase_views(txn, str(event.originator_id))

    def _registered(self, txn: ViewTransaction, e: SubjectRegistered) -> None:
        sid, at = str(e.originator_id), e.timestamp.isoformat()
        txn.put(
            "subject",
            sid,
            {
                "subject_id": sid,
                "tenant": e.tenant,
                "kind": e.kind,
                "external_ref": e.external_ref,
                "registered_at": at,
                "version": 0,
            },
        )
        txn.put(
            "profile",
            sid,
            {
                "subject_id": sid,
                "version": 0,
                "at": at,
                "said_at": at,
                "known_at": at,
                "fields": {},
            },
        )
        put_version(txn, sid, 0, at, {"kind": "registered"}, {})

    def _session(self, txn: ViewTransaction, e: SessionRecorded, position: int) -> None:
        txn.put(
            "session", f"{e.originator_id}:{e.interaction_number:06d}", session_doc(e, position)
        )

    def _proposed(self, txn: ViewTransaction, e: ChangeProposed, position: int) -> None:
        sid = str(e.originator_id)
        tenant = self._tenants.get(sid)
        if tenant is None:
            tenant = self._tenants[sid] = str(as_object(txn.get("subject", sid)).get("tenant", ""))
        change = change_doc(e, sid, tenant, e.timestamp.isoformat())
        txn.put("change", f"{sid}:{change['change_id']}", change)

    def _confirmed(self, txn: ViewTransaction, e: ChangeConfirmed, position: int) -> None:
        # The version is dated by the conversation in which the subject confirmed;
        # `decided_at` keeps when the ledger recorded the decision.
        sid, at = str(e.originator_id), e.dated.isoformat()
        change = decide(
            txn,
            sid,
            str(e.change_id),
            {
                "status": "confirmed",
                "confirmed_by": e.confirmed_by,
                "note": e.note,
                "decided_at": e.timestamp.isoformat(),
                **relayed(e.relayed_by),
            },
        )
        field = str(change["field"])
        said, known = said_time(txn, sid, e, change), e.timestamp.isoformat()
        profile = as_object(txn.get("profile", sid))
        fields = as_object(profile.get("fields"))
        before = as_object(fields.get(field)).get("value")
        # Values read back as None once their field's key is deleted: keep the
        # entry, so a rebuild after a forget yields the same versions as the live views did.
        erased = change["value"] is None and change["operation"] != Operation.UNSET.value
        value = (
            None
            if erased
            else apply_operation(
                None if not isinstance(before, dict) else from_payload(before),
                Operation(str(change["operation"])),
                None if not isinstance(change["value"], dict) else from_payload(change["value"]),
            )
        )
        entry: JsonObject = {
            **{
                k: change[k]
                for k in (
                    "change_id",
                    "condition",
                    "origin",
                    "evidence",
                    "rationale",
                    "proposed_by",
                    "operation",
                )
            },
            "value": None if value is None else to_payload(value),
            "display": None if value is None else render(value),
            "confirmed_by": e.confirmed_by,
            "confirmation": e.evidence,
            "confirmed_at": at,
            "said_at": said,
            "known_at": known,
            "version": e.profile_version,
            **relayed(e.relayed_by),
        }
        if value is None and not erased:
            fields.pop(field, None)
        else:
            fields[field] = entry
        new_version(
            txn,
            sid,
            e.profile_version,
            at,
            fields,
            {"kind": "confirmed", "change_id": str(e.change_id), "field": field},
            said_at=said,
            known_at=known,
        )
        close_history(txn, sid, field, e.profile_version, at)
        txn.put(
            "history",
            f"{sid}:{position:012d}",
            {
                **entry,
                # The reviewer's note is for reviewers: the history carries it, the profile
                # that agents read does not.
                "note": e.note,
                "field": field,
                "kind": str(change["operation"]),
                "at": at,
                "until_version": None,
                "until": None,
            },
        )

    def _rejected(self, txn: ViewTransaction, e: ChangeRejected) -> None:
        decide(
            txn,
            str(e.originator_id),
            str(e.change_id),
            {
                "status": "rejected",
                "rejected_by": e.rejected_by,
                "reason": e.reason,
                "decided_at": e.timestamp.isoformat(),
                **relayed(e.relayed_by),
            },
        )

    def _superseded(self, txn: ViewTransaction, e: ChangeSuperseded) -> None:
        """The older change leaves the queue; each of the two names the other."""
        sid = str(e.originator_id)
        decide(
            txn,
            sid,
            str(e.change_id),
            {
                "status": "superseded",
                "superseded_by": str(e.superseded_by),
                "decided_at": e.timestamp.isoformat(),
            },
        )
        key = f"{sid}:{e.superseded_by}"
        newer = as_object(txn.get("change", key))
        newer["supersedes"] = [*strings(newer.get("supersedes")), str(e.change_id)]
        txn.put("change", key, newer)

    def _forgotten(self, txn: ViewTransaction, e: FactForgotten, position: int) -> None:
        sid, at, field = str(e.originator_id), e.timestamp.isoformat(), str(e.field)
        version = int(e.profile_version or 0)
        for change_id in e.withdrawn_changes:
            change = decide(txn, sid, change_id, {"status": "forgotten", "decided_at": at})
            if change.get("field") != field:  # another field's, quoting the field's lines
                txn.put("change", f"{sid}:{change_id}", redacted(change))
        if e.request_id is not None:  # the request to forget the field, approved
            decide(
                txn,
                sid,
                e.request_id,
                {
                    "status": "confirmed",
                    "confirmed_by": e.requested_by,
                    "decided_at": at,
                    **relayed(e.relayed_by),
                },
            )
        redact_field(txn, sid, field)
        profile = as_object(txn.get("profile", sid))
        fields = as_object(profile.get("fields"))
        kept = kept_entry(as_object(fields.pop(field, None)), e, version)
        if kept is not None:
            fields[field] = kept
        new_version(txn, sid, version, at, fields, {"kind": "forgotten", "field": field})
        close_history(txn, sid, field, version, at)
        txn.put(
            "history",
            f"{sid}:{position:012d}",
            {
                "field": field,
                "kind": "forgotten",
                "at": at,
                "said_at": at,
                "known_at": at,
                "version": version,
                "requested_by": e.requested_by,
                "reason": e.reason,
                "until_version": None,
                "until": None,
            },
        )
        if kept is not None:  # the items the forget left, from its version on
            txn.put(
                "history",
                f"{sid}:{position:012d}:kept",
                {
                    **kept,
                    "field": field,
                    "kind": "kept",
                    "at": at,
                    "until_version": None,
                    "until": None,
                    "note": None,
                },
            )

    def _memory_forgotten(self, txn: ViewTransaction, e: FactForgotten) -> None:
        """The pending changes that quoted a forgotten memory's lines, or the lines a request
        to forget what was said named (ADR 0174), are withdrawn with them, their words
        redacted (their keys went); that request is confirmed, its words redacted too."""
        sid, at = str(e.originator_id), e.timestamp.isoformat()
        for change_id in e.withdrawn_changes:
            change = decide(txn, sid, change_id, {"status": "forgotten", "decided_at": at})
            txn.put("change", f"{sid}:{change_id}", redacted(change))
        if e.request_id is not None:
            approved = {
                "status": "confirmed",
                "confirmed_by": e.requested_by,
                "decided_at": at,
                **relayed(e.relayed_by),
            }
            change = decide(txn, sid, e.request_id, approved)
            txn.put("change", f"{sid}:{e.request_id}", redacted(change))

    def _words_forgotten(self, txn: ViewTransaction, e: FactForgotten) -> None:
        """The sessions whose lines a forget took lose their summary too (its key goes with
        theirs), as a rebuild, which reads it back as nothing, would show."""
        sessions = {ref.get("session_id") for ref in e.evidence_refs}
        if not sessions:
            return
        for key, doc in txn.scan("session", f"{e.originator_id}:"):
            if doc.get("session_id") in sessions and doc.get("has_summary"):
                txn.put("session", key, {**doc, "has_summary": False})

    def _expiry_set(self, txn: ViewTransaction, e: FieldExpirySet, position: int) -> None:
        """An expiry annotates the field of the current profile (no new version: the value is
        unchanged, and written versions never change); versions written later carry it while
        the field is unchanged. The history entry stays open until the field next changes."""
        sid, at, field = str(e.originator_id), e.timestamp.isoformat(), e.field
        valid_until = e.valid_until.isoformat()
        version = as_object(txn.get("subject", sid)).get("version")
        version = version if isinstance(version, int) else 0
        profile = as_object(txn.get("profile", sid))
        fields = as_object(profile.get("fields"))
        if field in fields:
            fields[field] = {**as_object(fields[field]), "valid_until": valid_until}
            txn.put("profile", sid, profile)
        for key, doc in txn.scan("history", f"{sid}:"):
            # An earlier expiry of the same value ends where this one begins.
            open_expiry = doc.get("kind") == "expiry" and doc.get("until") is None
            if doc.get("field") == field and open_expiry:
                txn.put("history", key, {**doc, "until_version": version, "until": at})
        txn.put(
            "history",
            f"{sid}:{position:012d}",
            {
                "field": field,
                "kind": "expiry",
                "at": at,
                "said_at": at,
                "known_at": at,
                "version": version,
                "valid_until": valid_until,
                "requested_by": e.requested_by,
                "reason": e.reason,
                "until_version": None,
                "until": None,
            },
        )
