"""The rules' facts and the sentences no rule fact stands on (ADR 0157): the memory backend's
call gets the subject's sentences the rules wrote nothing for, in the third person, beside the
rules' facts; the proposer's call gets the rules' facts alone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.learned.sentences import SentencesBesideRules
from factledger.api.bootstrap.backend import build_extractor
from factledger.api.bootstrap.proposals import model_actor
from factledger.api.settings import load_settings
from factledger.application.judgement.types import Judgement, Statement
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, FieldSlot
from factledger.domain.transcript import Message, Role
from tests.unit.adapters.extraction.test_learned_extractor import JudgeBySentence

AT = datetime(2026, 3, 2, 10, tzinfo=UTC)
SAID = (
    (Role.AGENT, "How are things? Which supplier do you use?"),
    (Role.SUBJECT, "Great, thanks! We moved to Supplier B in March. I stopped keto."),
    (Role.AGENT, "I'm on a Mac too."),
    (Role.SUBJECT, "  "),
    (Role.SUBJECT, "My sister works at Acme."),
)
SUPPLIER = ExtractedFact("f0", "works with Supplier B", "supplier", (1,), value="Supplier B")


@dataclass(frozen=True, slots=True)
class Rules:
    """A rule extractor that found `facts` in any transcript."""

    facts: tuple[ExtractedFact, ...]

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        return list(self.facts)


def _request(*fields: FieldSlot) -> ExtractionRequest:
    return ExtractionRequest(
        [Message(role, text, AT) for role, text in SAID], occurred_at=AT, fields=fields
    )


async def test_the_sentences_no_rule_fact_stands_on_join_the_rules_facts_as_notes() -> None:
    facts = await SentencesBesideRules(Rules((SUPPLIER,))).extract(_request())

    assert facts[0] == SUPPLIER
    assert [(f.text, f.slot, f.source_indexes) for f in facts[1:]] == [
        ("Great, thanks", None, (1,)),
        ("stopped keto", None, (1,)),
        ("their sister works at Acme", None, (4,)),
    ]
    assert len({f.key for f in facts}) == len(facts)


async def test_a_request_with_fields_gets_the_rules_facts_alone() -> None:
    facts = await SentencesBesideRules(Rules((SUPPLIER,))).extract(
        _request(FieldSlot("supplier", "supplier"))
    )

    assert facts == [SUPPLIER]


async def test_no_rule_fact_leaves_every_sentence_of_the_subjects_a_note() -> None:
    facts = await SentencesBesideRules(Rules(())).extract(_request())

    assert [f.text for f in facts] == [
        "Great, thanks",
        "moved to Supplier B in March",
        "stopped keto",
        "their sister works at Acme",
    ]


async def test_the_heads_drop_the_sentences_they_drop_a_rules_fact_for() -> None:
    judge = JudgeBySentence(
        {
            "Great, thanks!": Judgement(Statement.SMALL_TALK, 0.9, False, False, False),
            "My sister works at Acme.": Judgement(Statement.THIRD_PARTY, 0.9, False, False, False),
        }
    )

    facts = await LearnedExtractor(SentencesBesideRules(Rules((SUPPLIER,))), judge).extract(
        _request()
    )

    assert [f.text for f in facts] == ["works with Supplier B", "stopped keto"]


def test_the_setting_puts_the_sentences_beside_the_rules_and_keeps_the_models_name() -> None:
    settings = load_settings(extractor={"kind": "learned", "candidates": "rules_and_sentences"})

    extractor = build_extractor(settings.extractor, httpx.AsyncClient())

    assert isinstance(extractor, LearnedExtractor)
    assert isinstance(extractor.rules, SentencesBesideRules)
    # The proposals are the rules' and the QA reader's alike, so their ids are the default's.
    assert model_actor(settings) == model_actor(load_settings())
