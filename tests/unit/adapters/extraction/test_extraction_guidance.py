"""The guidance file: validated on load, so a typo never silently does nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.adapters.extraction.rules.guidance import (
    GuidanceError,
    load_guidance,
    parse_guidance,
)


def test_the_packaged_guidance_loads_once_and_names_every_slot_once() -> None:
    guidance = load_guidance()
    assert guidance is load_guidance()
    names = [slot.name for slot in guidance.slots]
    assert len(names) == len(set(names))
    assert {"supplier", "budget", "intent", "preference"} <= set(names)
    assert "Only messages with role" in guidance.llm_instructions


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"slotz": []}, "slotz"),
        ({"slots": [{"name": "x", "single_value": True}]}, r"slots\.0\.single_value"),
        ({"slots": [{"name": "Bad Name"}]}, r"slots\.0\.name"),
        ({"derivations": [{"name": "d", "slot": "s", "text": "t", "requires": []}]}, "requires"),
        ({"hedges": "maybe"}, "hedges"),
        ({"version": 2}, "version"),
    ],
)
def test_unknown_or_malformed_entries_are_named(data: dict[str, object], where: str) -> None:
    with pytest.raises(GuidanceError, match=where):
        parse_guidance(data)


def test_a_template_may_only_use_value() -> None:
    data = {"slots": [{"name": "x", "patterns": [{"match": "(?P<value>a)", "text": "{who}"}]}]}
    with pytest.raises(GuidanceError, match=r"slots\.x: a text may only use \{value\}"):
        parse_guidance(data)


def test_slot_names_are_unique() -> None:
    with pytest.raises(GuidanceError, match="unique"):
        parse_guidance({"slots": [{"name": "x"}, {"name": "x"}]})


def test_question_topics_must_capture_the_topic() -> None:
    with pytest.raises(GuidanceError, match="topic"):
        parse_guidance({"question_topics": ["would you (.*)"]})


def test_an_invalid_regex_is_reported_without_the_pattern(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("filler:\n  - '(unclosed'\n", encoding="utf-8")
    with pytest.raises(GuidanceError, match=r"^filler: invalid pattern") as error:
        load_guidance(path)
    assert "unclosed" not in str(error.value)


def test_a_non_mapping_file_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "g.yaml"
    path.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(GuidanceError, match="mapping"):
        load_guidance(path)
