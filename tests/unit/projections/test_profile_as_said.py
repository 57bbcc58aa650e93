"""The profile on the said clock, from history entries in recording order: per field, the
value said last by the time asked; a forget takes what came before it out; an expiry stays
with the value it was set on."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from factledger.domain.values import JsonObject
from factledger.projections.profile.as_said import profile_as_said

SUBJECT = uuid4()
ACTOR: JsonObject = {"kind": "staff", "id": "r-1"}


def t(month: int, day: int = 1) -> datetime:
    return datetime(2025, month, day, 9, 0, tzinfo=UTC)


def value(field: str, text: str, said: datetime, known: datetime, version: int) -> JsonObject:
    return {
        "field": field,
        "kind": "set",
        "value": {"type": "text", "value": text},
        "display": text,
        "origin": "stated",
        "proposed_by": ACTOR,
        "confirmed_by": ACTOR,
        "confirmed_at": known.isoformat(),
        "change_id": str(uuid4()),
        "version": version,
        "at": known.isoformat(),
        "said_at": said.isoformat(),
        "known_at": known.isoformat(),
    }


def done(field: str, kind: str, at: datetime, **more: str) -> JsonObject:
    return {"field": field, "kind": kind, "at": at.isoformat(), **more}


def shown(history: list[JsonObject], at: datetime) -> dict[str, str]:
    return {n: f.display for n, f in profile_as_said(SUBJECT, history, at).fields.items()}


def test_a_value_said_earlier_but_recorded_later_takes_its_place_in_time() -> None:
    march = value("supplier", "Globex", t(3, 3), t(6, 10), 1)
    january = value("supplier", "Initech", t(1, 14), t(6, 11), 2)  # a late import, approved
    history = [march, january]
    assert shown(history, t(1, 1)) == {}
    assert shown(history, t(2)) == {"supplier": "Initech"}
    assert shown(history, t(4)) == {"supplier": "Globex"}
    answer = profile_as_said(SUBJECT, history, t(4))
    assert (answer.version, answer.cause, answer.at) == (1, "said", t(4))
    assert (answer.said_at, answer.known_at) == (t(3, 3), t(6, 10))


def test_on_a_tie_the_value_recorded_last_wins() -> None:
    first = value("budget", "40k", t(1, 14), t(6, 10), 1)
    second = value("budget", "45k", t(1, 14), t(6, 11), 2)
    assert shown([first, second], t(2)) == {"budget": "45k"}


def test_a_forget_takes_the_earlier_values_out_and_an_unset_empties_the_field() -> None:
    history = [
        value("budget", "40k", t(1, 14), t(2), 1),
        done("budget", "forgotten", t(3)),
        value("supplier", "Globex", t(3, 3), t(4), 3),
        {**value("supplier", "", t(5), t(5, 2), 4), "kind": "unset", "value": None},
    ]
    assert shown(history, t(2)) == {}  # the forgotten budget never resurfaces
    assert shown(history, t(4)) == {"supplier": "Globex"}
    assert shown(history, t(6)) == {}


def test_an_expiry_stays_with_the_value_it_was_set_on() -> None:
    until = t(9).isoformat()
    history = [
        value("supplier", "Initech", t(1, 14), t(2), 1),
        value("supplier", "Globex", t(3, 3), t(4), 2),
        done("supplier", "expiry", t(5), valid_until=until),
    ]
    before = profile_as_said(SUBJECT, history, t(2)).fields["supplier"]
    after = profile_as_said(SUBJECT, history, t(4)).fields["supplier"]
    assert before.valid_until is None
    assert after.valid_until == t(9)


def test_entries_written_before_the_two_clocks_read_by_their_one_date() -> None:
    old = value("supplier", "Globex", t(3, 3), t(4), 1)
    del old["said_at"], old["known_at"]
    assert shown([old], t(3, 15)) == {}
    assert shown([old], t(4, 2)) == {"supplier": "Globex"}
    assert isinstance(profile_as_said(SUBJECT, [old], t(5)).subject_id, UUID)


def test_a_removal_that_took_off_a_lists_last_items_leaves_no_value() -> None:
    listed = {
        **value("tools", "Jira", t(1, 14), t(2, 1), 1),
        "kind": "append",
        "value": {"type": "list", "items": ["Jira"]},
    }
    emptied = {**value("tools", "", t(3, 3), t(3, 4), 2), "kind": "remove", "value": None}
    assert shown([listed, emptied], t(2)) == {"tools": "Jira"}
    assert shown([listed, emptied], t(4)) == {}
