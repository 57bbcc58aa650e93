"""What an event shows of its content: all of it to the roles that read subjects, none of it to
analysts, and never a forgotten value."""

from __future__ import annotations

from factledger.api.http.auth import Principal, Role
from factledger.api.http.event_views import reads_content
from factledger.application.ledger.event_views import without_content


def test_only_roles_that_read_subjects_get_content() -> None:
    allowed = {role for role in Role if reads_content(Principal("p", "t1", role))}
    assert allowed == {Role.SERVICE, Role.ADMIN, Role.REVIEWER}


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
