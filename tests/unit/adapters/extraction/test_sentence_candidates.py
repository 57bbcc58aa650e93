"""The learned extractor without the rules (ADR 0125): the subject's sentences are its
candidate memories, the heads keep the subject's own, and a request with fields is read by the
field reader alone."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.learned.sentences import SentenceCandidates
from factledger.api.bootstrap.backend import build_extractor
from factledger.api.bootstrap.proposals import model_actor
from factledger.api.settings import SettingsError, load_settings
from factledger.application.judgement.types import FieldStatement, Judgement, Statement
from factledger.application.memory.extraction import ExtractionRequest, FieldSlot
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.transcript import Message, Role
from tests.unit.adapters.extraction.test_learned_extractor import JudgeBySentence

AT = datetime(2026, 3, 2, 10, tzinfo=UTC)
SAID = (
    (Role.AGENT, "How are things? What do you run on today?"),
    (Role.SUBJECT, "Great, thanks! We moved to Supplier B in March. My sister works at Acme."),
    (Role.AGENT, "Is there a budget?"),
    (Role.SUBJECT, "  "),
    (Role.SUBJECT, "Maybe 40k for the year"),
)


def _request(*fields: FieldSlot) -> ExtractionRequest:
    return ExtractionRequest(
        [Message(role, text, AT) for role, text in SAID], occurred_at=AT, fields=fields
    )


def _about(statement: Statement, *, hedged: bool = False) -> Judgement:
    return Judgement(statement, 0.9, hedged=hedged, forget_request=False, correction=False)


async def test_each_sentence_of_the_subjects_lines_is_an_unslotted_candidate() -> None:
    facts = await SentenceCandidates().extract(_request())

    assert [(f.text, f.slot, f.source_indexes) for f in facts] == [
        ("Great, thanks!", None, (1,)),
        ("We moved to Supplier B in March.", None, (1,)),
        ("My sister works at Acme.", None, (1,)),
        ("Maybe 40k for the year", None, (4,)),
    ]
    assert len({f.key for f in facts}) == len(facts)


async def test_the_heads_keep_the_subjects_own_sentences_as_memories() -> None:
    judge = JudgeBySentence(
        {
            "Great, thanks!": _about(Statement.SMALL_TALK),
            "My sister works at Acme.": _about(Statement.THIRD_PARTY),
        }
    )

    facts = await LearnedExtractor(SentenceCandidates(), judge).extract(_request())

    assert [f.text for f in facts] == ["We moved to Supplier B in March.", "Maybe 40k for the year"]


async def test_a_request_with_fields_is_read_by_the_field_reader_alone() -> None:
    judge = JudgeBySentence(
        {"Maybe 40k for the year": _about(Statement.SELF, hedged=True)},
        stated=(
            FieldStatement(1, "Supplier B", "supplier", 7.0),
            FieldStatement(4, "40k", "budget", 6.0),
        ),
    )
    fields = (FieldSlot("supplier", "supplier"), FieldSlot("budget", "budget"))

    facts = await LearnedExtractor(SentenceCandidates(), judge, asks_every_field=True).extract(
        _request(*fields)
    )

    assert [(f.slot, f.value, f.condition) for f in facts] == [
        ("supplier", "Supplier B", None),
        ("budget", "40k", "Maybe for the year"),
    ]


def test_the_setting_puts_the_sentences_in_place_of_the_rules_and_names_the_model() -> None:
    settings = load_settings(extractor={"kind": "learned", "candidates": "sentences"})

    extractor = build_extractor(settings.extractor, httpx.AsyncClient())

    assert isinstance(extractor, LearnedExtractor)
    assert isinstance(extractor.rules, SentenceCandidates)
    assert extractor.asks_every_field
    assert model_actor(settings) == Actor(ActorKind.MODEL, "learned-sentences@1.1")
    assert model_actor(load_settings()) != model_actor(settings)


def test_a_candidates_setting_of_no_known_source_is_refused_naming_it() -> None:
    with pytest.raises(SettingsError, match="candidates"):
        load_settings(extractor={"kind": "learned", "candidates": "words"})
