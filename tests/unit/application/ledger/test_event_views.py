"""What an event shows when its content may not go: content fields nulled, evidence reduced to
where it was said."""

from __future__ import annotations

from factledger.application.ledger.event_views import without_content


def test_content_is_nulled_and_evidence_keeps_only_where_it_was_said() -> None:
    payload = {
        "field": "supplier",
        "value": {"type": "text", "value": "Supplier A"},
        "rationale": "they said so",
        "evidence": {"session_id": "s-1", "message_index": 3, "quote": "Supplier A"},
        "transcript": [{"text": "We use Supplier A"}],
        "summary": {"text": "uses A"},
    }
    stripped = without_content(payload)
    assert stripped["field"] == "supplier"
    assert stripped["evidence"] == {"session_id": "s-1", "message_index": 3}
    assert "Supplier A" not in repr(stripped)
    assert {k for k, v in stripped.items() if v is None} == {
        "value",
        "rationale",
        "transcript",
        "summary",
    }
