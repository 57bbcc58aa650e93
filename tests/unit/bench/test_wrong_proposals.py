"""Where a dev half's precision goes: each proposal the scorer counts wrong, by the first class
that holds."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from factledger.bench.evalsets.cases import Case, parse_cases
from factledger.bench.evalsets.run import CaseRun
from factledger.bench.evalsets.wrong_proposals import (
    half_wrong,
    main,
    wrong_kind,
    wrong_proposals,
)
from factledger.bench.proposal_eval import Made
from factledger.domain.provenance import Operation
from factledger.domain.said_lines import SAID_LINES
from tests.unit.bench.test_blind_evalsets import CASE, _proposal


def _case() -> Case:
    raw = copy.deepcopy(CASE)
    raw[0]["sessions"][0]["expect"]["not_proposed"] = [
        {"keywords": ["Rohit"], "why": "third_party"}
    ]
    (case,) = parse_cases(raw)
    return case


@pytest.mark.parametrize(
    ("session", "field", "value", "kind"),
    [
        (0, "employer", "my friend Rohit's firm", "not_proposed:third_party"),
        (0, "supplier", "40,000 dollars", "another_field"),
        (1, "supplier", "Boxmart", "said_before"),
        (0, "budget", "forty grand or so", "other_words"),
        (0, "phone", "0987 654", "unlabelled"),
    ],
)
def test_a_wrong_proposal_takes_the_first_class_that_holds(
    session: int, field: str, value: str, kind: str
) -> None:
    made = Made(session, _proposal(field, Operation.SET, value))

    assert wrong_kind(_case(), made) == kind


def test_only_the_proposals_matching_nothing_are_listed_with_the_fields_earlier_values() -> None:
    case = _case()
    made = [
        Made(0, _proposal("supplier", Operation.SET, "Boxmart")),
        Made(1, _proposal("supplier", Operation.SET, "Boxmart Ltd")),
        Made(1, _proposal("phone", Operation.FORGET, None)),
    ]

    (wrong,) = wrong_proposals(CaseRun(case, made))

    assert (wrong.session, wrong.field, wrong.value, wrong.kind) == (
        1,
        "supplier",
        "Boxmart Ltd",
        "said_before",
    )
    assert wrong.earlier == ((0, "Boxmart"),)


def test_requests_to_forget_removals_and_said_lines_requests_are_never_wrong_proposals() -> None:
    # The scorer counts each apart (its forget and removal figures), never in precision.
    made = [
        Made(1, _proposal("phone", Operation.FORGET, None)),
        Made(1, _proposal("supplier", Operation.REMOVE, "Boxmart")),
        Made(1, _proposal(SAID_LINES, Operation.FORGET_SAID, "A-case-s0#0")),
    ]

    assert wrong_proposals(CaseRun(_case(), made)) == []


async def test_a_held_out_half_is_never_read(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        await half_wrong(tmp_path / "blind9" / "heldout")


def test_a_value_fit_file_needs_its_pin_and_the_head_on(tmp_path: Path) -> None:
    dev = str(tmp_path / "blind9" / "dev")
    unpinned = [dev, "--value-fit-file", str(tmp_path / "value-fit.npz")]

    with pytest.raises(SystemExit) as without_pin:
        main(unpinned)
    with pytest.raises(SystemExit) as head_off:
        main([*unpinned, "--value-fit-sha256", "0" * 64, "--value-fit", "off"])

    assert without_pin.value.code == head_off.value.code == 2  # refused before any case is read
