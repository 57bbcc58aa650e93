"""The profile on the conversations' clock: each field's latest value said by a time.

Written versions follow the ledger's clock (the order decisions were recorded in). Asked
"what had the subject told us by April?", the answer is built from the field histories
instead: for each field, of the entries said by then, the one said last (on a tie, the one
recorded last). Everything the ledger knows now counts, including a session imported after
later ones. A forget takes the field's earlier entries out of this answer altogether (the
written versions keep them, redacted); an expiry changes no value, so it is not a step here,
but the value an expiry was set on (the field's latest recorded before it) carries its
`valid_until`, as the current profile does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from uuid import UUID

from factledger.application.ledger.queries import ProfileField, ProfileVersion
from factledger.domain.values import JsonObject
from factledger.projections.profile.documents import profile_field

_NO_VALUE = ("unset", "forgotten")


def _said(doc: JsonObject) -> datetime:
    return datetime.fromisoformat(str(doc.get("said_at") or doc["at"]))


def profile_as_said(
    subject_id: UUID, history: Sequence[JsonObject], at: datetime
) -> ProfileVersion:
    """The profile as said by `at`, from the subject's history documents in recording order."""
    latest: dict[str, tuple[datetime, int, JsonObject]] = {}
    recorded_last: dict[str, int] = {}  # field -> order of its latest recorded value
    expiries: dict[int, str] = {}  # order of a value -> the valid_until last set on it
    for order, doc in enumerate(history):
        kind, field = doc.get("kind"), str(doc.get("field"))
        if kind == "expiry":
            if field in recorded_last:
                expiries[recorded_last[field]] = str(doc.get("valid_until"))
            continue
        recorded_last[field] = order
        if kind == "forgotten":
            latest.pop(field, None)  # what was recorded before a forget never resurfaces
            continue
        said = _said(doc)
        if said > at:
            continue
        best = latest.get(field)
        if best is None or (said, order) >= best[:2]:
            latest[field] = (said, order, doc)
    fields: dict[str, ProfileField] = {}
    for name, (_, order, doc) in sorted(latest.items()):
        if doc.get("kind") in _NO_VALUE or (doc.get("kind") == "remove" and not doc.get("value")):
            continue  # unset, forgotten, or a list whose last items a removal took off
        shown = profile_field(name, doc)
        if order in expiries:
            shown = replace(shown, valid_until=datetime.fromisoformat(expiries[order]))
        fields[name] = shown
    return ProfileVersion(
        subject_id=subject_id,
        version=max((f.version for f in fields.values()), default=0),
        at=at,
        cause="said",
        fields=fields,
        said_at=max((f.said_at for f in fields.values() if f.said_at), default=None),
        known_at=max((f.known_at for f in fields.values() if f.known_at), default=None),
    )
