"""The body of one decision on many pending changes, shared by both clients: ticked changes
or a filter's selection, and only the optional parts given."""

from __future__ import annotations

from uuid import UUID

from factledger.client import calls as c

SUBJECT = UUID("00000000-0000-0000-0000-000000000001")
CHANGE = UUID("00000000-0000-0000-0000-000000000002")


def test_ticked_changes_name_each_subject_and_change() -> None:
    body = c.decision_body("approve", [(SUBJECT, CHANGE)], None, None, None, "checked", None)
    assert body == {
        "decision": "approve",
        "changes": [{"subject_id": str(SUBJECT), "change_id": str(CHANGE)}],
        "note": "checked",
    }


def test_a_filters_selection_carries_its_snapshot_and_expected_count() -> None:
    body = c.decision_body("reject", None, {"field": "budget"}, "s-1", 12, None, "duplicate")
    assert body == {
        "decision": "reject",
        "filter": {"field": "budget"},
        "snapshot": "s-1",
        "expected_count": 12,
        "reason": "duplicate",
    }
