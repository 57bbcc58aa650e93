"""Guidance files that extend others, and the rule extractor choosing guidance per request."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from factledger.adapters.extraction.rules import routed_guidance
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.guidance import (
    Guidance,
    GuidanceError,
    load_guidance,
    load_packaged_guidance,
)
from factledger.adapters.extraction.rules.routed_guidance import RoutedGuidance
from factledger.application.memory.extraction import ExtractionContext, ExtractionRequest
from factledger.application.memory.guidance_catalogue import GuidanceRoute
from factledger.domain.transcript import Message, Role

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
CHILD = """
version: 1
extends: default
hedges: [maybe, "sort of"]
slots:
  - name: warehouse
    patterns:
      - match: "\\\\bour warehouse is in {NAME}"
        text: "has a warehouse in {value}"
  - name: supplier
    patterns:
      - match: "\\\\bour freight goes with {NAME}"
        text: "works with {value}"
llm_instructions: |
  Also note where their warehouse is.
"""


def slots(request: ExtractionRequest, extractor: RuleExtractor) -> dict[str | None, str]:
    return {f.slot: f.text for f in extractor.extract_now(request)}


def said(text: str, **context: str) -> ExtractionRequest:
    return ExtractionRequest(
        [Message(Role.SUBJECT, text)], T0, context=ExtractionContext(**context)
    )


def test_a_file_extending_the_default_adds_slots_and_triggers_without_copying(
    tmp_path: Path,
) -> None:
    path = tmp_path / "logistics.yaml"
    path.write_text(CHILD, encoding="utf-8")
    child, base = load_guidance(path), load_guidance()
    names = [s.name for s in child.slots]
    assert names[0] == "warehouse"  # new slots come first
    assert set(names) == {"warehouse"} | {s.name for s in base.slots}
    supplier = child.slot("supplier")
    parent_supplier = base.slot("supplier")
    assert supplier is not None
    assert parent_supplier is not None
    assert len(supplier.patterns) == len(parent_supplier.patterns) + 1
    assert child.hedges.count("maybe") == 1
    assert "sort of" in child.hedges
    assert child.llm_instructions.startswith(base.llm_instructions.rstrip("\n"))
    assert child.llm_instructions.rstrip().endswith("Also note where their warehouse is.")
    extractor = RuleExtractor(child)
    assert slots(said("Our warehouse is in Rotterdam."), extractor)["warehouse"] == (
        "has a warehouse in Rotterdam"
    )
    assert "supplier" in slots(said("We use Supplier A."), extractor)  # the base still applies


def test_extends_follows_a_relative_file_and_refuses_a_cycle(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(CHILD, encoding="utf-8")
    (tmp_path / "leaf.yaml").write_text("extends: ./base.yaml\nversion: 1\n", encoding="utf-8")
    assert load_guidance(tmp_path / "leaf.yaml").slot("warehouse") is not None
    (tmp_path / "a.yaml").write_text("extends: ./b.yaml\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("extends: ./a.yaml\n", encoding="utf-8")
    with pytest.raises(GuidanceError):
        load_guidance(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("extends: no_such_guidance\n", encoding="utf-8")
    with pytest.raises(GuidanceError):
        load_guidance(tmp_path / "c.yaml")


def test_the_packaged_guidance_extends_the_default_and_adds_its_own_slots() -> None:
    base = {s.name for s in load_guidance().slots}
    sales = {s.name for s in load_packaged_guidance("sales_discovery").slots}
    support = {s.name for s in load_packaged_guidance("support_ticket").slots}
    assert {"timeline", "decision_maker", "competitor"} <= sales - base
    assert {"issue", "severity", "environment", "requested_outcome", "product"} <= support - base
    assert base < sales
    assert base < support
    assert load_packaged_guidance("sales_discovery") is load_packaged_guidance("sales_discovery")


def test_a_guidances_own_slot_wins_over_an_inherited_one_on_the_same_words(
    tmp_path: Path,
) -> None:
    # Given a child whose own slot and the default's complaint both read the sentence, the
    # complaint's match starting earlier and running longer
    path = tmp_path / "fleet.yaml"
    path.write_text(
        "version: 1\nextends: default\nslots:\n  - name: fault\n    patterns:\n"
        '      - match: "\\\\b(?P<value>export keeps failing)"\n'
        '        text: "reports that the {value}"\n',
        encoding="utf-8",
    )
    child = load_guidance(path)
    assert child.slot("fault") is not None
    assert child.slot("fault").inherited == 0  # type: ignore[union-attr]
    assert child.slot("complaint").inherited == 1  # type: ignore[union-attr]
    # When it is read, then only the child's slot speaks for those words
    found = slots(said("The export keeps failing on Windows 11."), RuleExtractor(child))
    assert "fault" in found
    assert not any(slot and slot.startswith("complaint") for slot in found)
    # and the default alone still reads it as a complaint, in a note that reads mid-sentence
    plain = slots(said("The export keeps failing on Windows 11."), RuleExtractor())
    complaint = next(text for slot, text in plain.items() if slot and "complaint" in slot)
    assert complaint.startswith("complained that the export keeps failing")


def test_a_packaged_types_slot_wins_over_the_default_complaint() -> None:
    found = slots(
        said("The export keeps failing on Windows 11.", conversation_type="support_ticket"),
        RuleExtractor(),
    )
    assert found["issue"] == "reports: the export keeps failing"
    assert "environment:windows_11" in found
    assert not any(slot and slot.startswith("complaint") for slot in found)


def test_the_rule_extractor_reads_each_request_with_its_conversation_types_guidance() -> None:
    extractor = RuleExtractor()
    text = "The final decision is with our CFO. The export keeps failing."
    assert "decision_maker" in slots(said(text, conversation_type="sales_discovery"), extractor)
    assert "issue" not in slots(said(text, conversation_type="sales_discovery"), extractor)
    assert "issue" in slots(said(text, conversation_type="support_ticket"), extractor)
    assert "decision_maker" not in slots(said(text, conversation_type="support_ticket"), extractor)
    plain = slots(said(text), extractor)
    assert "issue" not in plain
    assert "decision_maker" not in plain


def test_routes_pick_guidance_by_tenant_and_kind(tmp_path: Path) -> None:
    path = tmp_path / "logistics.yaml"
    path.write_text(CHILD, encoding="utf-8")
    routes = RoutedGuidance.load([GuidanceRoute(str(path), tenant="acme", subject_kind="supplier")])
    extractor = RuleExtractor(routes=routes)
    text = "Our warehouse is in Rotterdam."
    assert "warehouse" in slots(said(text, tenant="acme", subject_kind="supplier"), extractor)
    assert "warehouse" not in slots(said(text, tenant="acme", subject_kind="lead"), extractor)
    assert "warehouse" not in slots(said(text, tenant="globex", subject_kind="supplier"), extractor)


def test_the_default_guidance_path_overrides_only_the_default(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(CHILD, encoding="utf-8")
    extractor = RuleExtractor.from_guidance_file(path)
    text = "Our warehouse is in Rotterdam."
    assert "warehouse" in slots(said(text), extractor)
    assert "warehouse" not in slots(said(text, conversation_type="support_ticket"), extractor)


def test_an_unknown_guidance_name_fails_when_the_book_is_loaded() -> None:
    with pytest.raises(GuidanceError):
        RoutedGuidance.load([GuidanceRoute("nowhere", tenant="acme")])


def test_a_bad_guidance_file_fails_when_the_book_is_loaded(tmp_path: Path) -> None:
    # Packaged guidance compiles when first asked for; a deployment's own file still fails
    # the start, not the first transcript that needs it.
    path = tmp_path / "broken.yaml"
    path.write_text("extends: no-such-guidance\n", encoding="utf-8")
    with pytest.raises(GuidanceError):
        RoutedGuidance.load([GuidanceRoute(str(path), tenant="acme")])


def test_packaged_guidance_compiled_on_first_use_is_the_packaged_guidance() -> None:
    routes = RoutedGuidance.load()
    names = list(routes.guidances)
    assert "default" in names
    assert "support_ticket" in names
    for name in names:
        assert routes.guidances[name] == load_packaged_guidance(name)
    with pytest.raises(KeyError):
        routes.guidances["nowhere"]


def test_a_rule_extractor_compiles_its_packaged_default_at_its_first_extraction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[Path | None] = []
    real = routed_guidance.load_guidance

    def counted(path: Path | None = None) -> Guidance:
        compiled.append(path)
        return real(path)

    monkeypatch.setattr(routed_guidance, "load_guidance", counted)
    extractor = RuleExtractor(routes=RoutedGuidance.load())
    assert compiled == []
    assert extractor.guidance == load_packaged_guidance("default")
    assert compiled == [None]
