"""ADR 0162's count: how many expected items each list item the product proposed holds."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from factledger.bench.evalsets.cases import parse_cases
from factledger.bench.evalsets.list_items import list_items, main
from factledger.bench.evalsets.run import CaseRun
from factledger.bench.proposal_eval import Made
from factledger.domain.provenance import Operation
from factledger.domain.values import ListValue
from tests.unit.bench.test_blind_evalsets import CASE, _proposal


def test_each_item_is_counted_by_the_expected_items_of_its_field_it_holds() -> None:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["proposals"] += [
        {"field": "competitors", "value": "Vatly", "keywords": ["Vatly"]},
        {"field": "competitors", "value": "Zorb", "keywords": ["Zorb"]},
    ]
    (case,) = parse_cases(raw)
    listed = replace(
        _proposal("competitors", Operation.APPEND, None),
        value=ListValue(("Vatly and Zorb", "Zorb", "Acme")),
    )
    forget = replace(listed, operation=Operation.FORGET, value=ListValue(("Vatly",)))
    made = [Made(0, listed), Made(0, forget), Made(0, _proposal("supplier", Operation.SET, "X"))]

    items = list_items(CaseRun(case, made))

    assert [(i.item, i.holds) for i in items] == [
        ("Vatly and Zorb", "several"),
        ("Zorb", "one"),
        ("Acme", "none"),
    ]


def test_a_held_out_halfs_items_are_never_listed(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        main([str(tmp_path / "blind9" / "heldout"), "--detail", str(tmp_path / "d.json")])
