"""When a confirmed value was said: the conversation's clock of a profile version.

The ledger's own clock (when a decision was recorded) is the event's timestamp. The
conversation's clock is the time of the words the value rests on:

- a subject's confirmation: the confirming message (`ChangeConfirmed.said_at`);
- a reviewer's approval of a change with evidence: the evidence's message
  (`ChangeProposed.said_at`, kept on the change document);
- a change proposed before proposals carried that time: its evidence session's start, read
  from the session index (the message's own time is not in the views);
- a change with no evidence at all: the decision itself, which is then when it was said.
"""

from __future__ import annotations

from factledger.application.ledger.ports import ViewTransaction
from factledger.domain.events import ChangeConfirmed
from factledger.domain.values import JsonObject


def said_time(txn: ViewTransaction, sid: str, e: ChangeConfirmed, change: JsonObject) -> str:
    """The ISO time at which the value confirmed by `e` (its change document `change`) was
    said; see the module's docstring for the order of the sources."""
    if e.said_at is not None:
        return e.said_at.isoformat()
    said = change.get("said_at")
    if isinstance(said, str):
        return said
    evidence = change.get("evidence")
    session_id = evidence.get("session_id") if isinstance(evidence, dict) else None
    if isinstance(session_id, str):
        for _, doc in txn.scan("session", f"{sid}:"):
            started = doc.get("started_at")
            if doc.get("session_id") == session_id and isinstance(started, str):
                return started
    return e.timestamp.isoformat()
