"""Writes the profile projection shares between its event handlers: a decision on a change,
a new profile version, the end of a field's open history entries, a forget's redaction and an
erasure. Each takes the batch's `ViewTransaction`, so all of them commit with the batch."""

from __future__ import annotations

from factledger.application.ledger.ports import ViewTransaction
from factledger.domain.errors import ProfileVersionRewriteError
from factledger.domain.values import JsonObject
from factledger.projections.profile.shapes import as_object, redacted, version_key


def strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def decide(txn: ViewTransaction, sid: str, change_id: str, update: JsonObject) -> JsonObject:
    """Records a decision on a change and takes it out of the queue."""
    key = f"{sid}:{change_id}"
    change = as_object(txn.get("change", key))
    change.update(update)
    txn.put("change", key, change)
    return change


def erase_views(txn: ViewTransaction, sid: str) -> None:
    """An erased subject leaves no document behind."""
    txn.delete("subject", sid)
    txn.delete("profile", sid)
    for view in ("version", "history", "change", "session"):
        for key, _ in txn.scan(view, f"{sid}:"):
            txn.delete(view, key)


def redact_field(txn: ViewTransaction, sid: str, field: str) -> None:
    """Forget is the one rewrite of the past: the field's content leaves every view."""
    for view in ("history", "change"):
        for key, doc in txn.scan(view, f"{sid}:"):
            if doc.get("field") == field:
                txn.put(view, key, redacted(doc))
    for key, doc in txn.scan("version", f"{sid}:"):
        fields = as_object(doc.get("fields"))
        if field in fields:
            fields[field] = redacted(as_object(fields[field]))
            txn.put("version", key, doc)


def new_version(
    txn: ViewTransaction,
    sid: str,
    version: int,
    at: str,
    fields: JsonObject,
    cause: JsonObject,
    *,
    said_at: str | None = None,
    known_at: str | None = None,
) -> None:
    """`said_at`: when what caused the version was said (the conversation's clock);
    `known_at`: when the ledger recorded it. Both default to `at` (a forget is not said)."""
    clocks: JsonObject = {"said_at": said_at or at, "known_at": known_at or at}
    txn.put(
        "profile",
        sid,
        {"subject_id": sid, "version": version, "at": at, **clocks, "fields": fields},
    )
    subject = as_object(txn.get("subject", sid))
    txn.put("subject", sid, {**subject, "version": version})
    put_version(txn, sid, version, at, cause, fields, said_at=said_at, known_at=known_at)


def put_version(
    txn: ViewTransaction,
    sid: str,
    version: int,
    at: str,
    cause: JsonObject,
    fields: JsonObject,
    *,
    said_at: str | None = None,
    known_at: str | None = None,
) -> None:
    key = version_key(sid, version)
    doc: JsonObject = {
        "subject_id": sid,
        "version": version,
        "at": at,
        "said_at": said_at or at,
        "known_at": known_at or at,
        "cause": cause,
        "fields": fields,
    }
    existing = txn.get("version", key)
    if existing is not None and existing != doc:
        raise ProfileVersionRewriteError(f"subject {sid} version {version}")
    txn.put("version", key, doc)


def close_history(txn: ViewTransaction, sid: str, field: str, version: int, at: str) -> None:
    for key, doc in txn.scan("history", f"{sid}:"):
        if doc.get("field") == field and doc.get("until_version") is None:
            txn.put("history", key, {**doc, "until_version": version, "until": at})
