"""The cost bench's held fields: a later session meets what earlier sessions stated."""

from datetime import UTC, datetime

from factledger.bench.evalsets.cases import DOMAINS, Case, Expected, Session
from factledger.bench.evalsets.cost import held_slots


def _session(*stated: tuple[str, tuple[str, ...]]) -> Session:
    return Session(
        at=datetime(2026, 1, 1, tzinfo=UTC),
        channel="chat",
        lines=(("subject", "hello"),),
        proposals=tuple(
            Expected(field, words, "stated", None, False, False, None) for field, words in stated
        ),
        not_proposed=(),
        forgets=(),
        questions=(),
    )


def test_a_field_is_held_with_its_latest_earlier_statement_and_not_before_it() -> None:
    supplier, budget = DOMAINS["sales"][1][3], DOMAINS["sales"][1][4]
    case = Case(
        id="c",
        writer="w",
        domain="sales",
        kind="lead",
        tags=(),
        sessions=(
            _session((supplier, ("Northwind",))),
            _session((supplier, ("Contoso", "Ltd"))),
            _session((budget, ("40k",))),
        ),
        reviews=(),
    )
    first = {s.field: s for s in held_slots(case, 0)}
    third = {s.field: s for s in held_slots(case, 2)}
    assert not first[supplier].held
    assert first[supplier].held_value is None
    assert third[supplier].held
    assert third[supplier].held_value == "Contoso Ltd"
    assert not third[budget].held
    assert set(third) == set(DOMAINS["sales"][1])
