"""Settings -> the product's model: profile schemas with slots, feeds, modes and the actor."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest

from factledger.adapters import deferred_load
from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.in_memory.event_store import popo_env
from factledger.adapters.in_memory.key_store import InMemoryKeyStore
from factledger.adapters.judgement.held_change import (
    PACKAGED_HELD_CHANGE_HEAD,
    PACKAGED_HELD_CHANGE_HEAD_SHA256,
    HeldChangeHead,
)
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.adapters.judgement.multilingual_closeness import MultilingualCloseness
from factledger.adapters.judgement.qa_reader.field_floors import FieldFloors
from factledger.adapters.judgement.qa_reader.judge import QaReadingJudge
from factledger.adapters.judgement.qa_reader.mentions import (
    PACKAGED_MENTION_FLOOR,
    QaFieldMentions,
)
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_ALONE_FLOOR,
    PACKAGED_QA_READER_ALONE_HELD_FLOOR,
    PACKAGED_QA_READER_ALONE_LIST_FLOOR,
    PACKAGED_QA_READER_FLOOR,
    PACKAGED_QA_READER_HELD_FLOOR,
    PACKAGED_QA_READER_LIST_FLOOR,
    PACKAGED_QA_READER_SHA256,
    PACKAGED_QA_READER_SPAN_SLACK,
    PACKAGED_QA_READER_SPREAD_LIST_FLOOR,
    QaFieldReader,
    QaReaderIntegrityError,
)
from factledger.adapters.judgement.span_verifier import SPAN_VERIFIER_FILE
from factledger.adapters.judgement.value_fit import (
    PACKAGED_VALUE_FIT,
    ValueAnswer,
    ValueFitHead,
    ValueFitIntegrityError,
)
from factledger.adapters.values.words import WordsValueReader
from factledger.api.bootstrap import judgement as judgement_bootstrap
from factledger.api.bootstrap.backend import build_extractor
from factledger.api.bootstrap.judgement import qa_field_reader
from factledger.api.bootstrap.proposals import (
    build_proposer,
    kind_feeds,
    model_actor,
    profile_schemas,
    proposal_modes,
)
from factledger.api.settings import (
    OpenAICompatibleExtractorSettings,
    SettingsError,
    load_settings,
)
from factledger.application.errors import ModelUnavailableError
from factledger.application.ledger.ledger import Ledger
from factledger.application.proposals.typed import DateOrder, ReadingHints, YearUnsaid
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.values import ValueType


def test_a_schema_field_names_its_type_and_the_slots_that_feed_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_PROFILE_SCHEMAS",
        '{"patient": {"allergies": {"type": "list", "slots": ["allergy"]}, "note": "text",'
        ' "insurer": {"type": "text", "slots": []}}}',
    )
    settings = load_settings()

    assert profile_schemas(settings)["patient"].fields == {
        "allergies": ValueType.LIST,
        "note": ValueType.TEXT,
        "insurer": ValueType.TEXT,
    }
    patient = kind_feeds(settings)["patient"]
    allergies = patient.field_for("allergy:peanuts")
    assert allergies is not None
    assert (allergies.field, allergies.many) == ("allergies", True)
    note = patient.field_for("note")  # a bare type: fed by the slot of its own name
    assert note is not None
    assert note.field == "note"
    assert patient.field_for("insurer") is None  # slots left empty: only callers propose
    supplier = kind_feeds(settings)["lead"].field_for("supplier")  # the built-in lead feeds
    assert supplier is not None


def test_a_money_field_may_name_its_currency_and_typed_fields_are_read_from_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_PROFILE_SCHEMAS",
        '{"buyer": {"budget": {"type": "money", "slots": ["budget"], "currency": "EUR"},'
        ' "move_by_date": "date",'
        ' "birth": {"type": "date", "slots": ["date_of_birth"], "date_order": "day_first",'
        ' "year_unsaid": "none"}}}',
    )
    settings = load_settings()
    buyer = kind_feeds(settings)["buyer"]
    budget, move_by = buyer.field_for("budget"), buyer.field_for("move_by_date")
    assert budget is not None
    assert (budget.type, budget.currency) == (ValueType.MONEY, "EUR")
    assert move_by is not None
    assert (move_by.type, move_by.currency) == (ValueType.DATE, None)
    birth = buyer.field_for("date_of_birth")
    assert birth is not None
    assert birth.hints == ReadingHints(None, DateOrder.DAY_FIRST, YearUnsaid.NONE)
    assert move_by.hints == ReadingHints()  # a date said without its year: the next one
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())
    try:
        assert isinstance(
            build_proposer(settings, ledger, RuleExtractor()).values, WordsValueReader
        )
    finally:
        ledger.close()


@pytest.mark.parametrize(
    ("field", "named"),
    [
        ('{"type": "date", "currency": "EUR"}', "currency"),
        ('{"type": "money", "currency": "euro"}', "currency"),
        ('{"type": "money", "date_order": "day_first"}', "date_order"),
        ('{"type": "date", "date_order": "year_first"}', "date_order"),
        ('{"type": "number", "year_unsaid": "none"}', "year_unsaid"),
    ],
)
def test_a_currency_or_date_order_a_field_cannot_hold_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, field: str, named: str
) -> None:
    monkeypatch.setenv("FACTLEDGER_PROFILE_SCHEMAS", f'{{"buyer": {{"budget": {field}}}}}')
    with pytest.raises(SettingsError, match=rf"profile_schemas\.buyer\.budget\.[^,]*{named}"):
        load_settings()


def test_proposals_are_on_by_default_and_off_per_tenant_or_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert proposal_modes(load_settings()).proposes("any", "lead")
    monkeypatch.setenv(
        "FACTLEDGER_PROPOSALS__TENANTS",
        '{"clinic": {"mode": "off", "kinds": {"lead": "propose"}},'
        ' "acme": {"kinds": {"patient": "off"}}}',
    )
    modes = proposal_modes(load_settings())
    assert not modes.proposes("clinic", "patient")
    assert modes.proposes("clinic", "lead")
    assert not modes.proposes("acme", "patient")
    assert modes.proposes("acme", "lead")


def test_requests_to_forget_are_read_for_a_replacement_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())
    try:
        assert not build_proposer(load_settings(), ledger, RuleExtractor()).replacements_in_requests
        monkeypatch.setenv("FACTLEDGER_PROPOSALS__REPLACEMENTS_IN_REQUESTS", "true")
        proposer = build_proposer(load_settings(), ledger, RuleExtractor())
        assert proposer.replacements_in_requests
    finally:
        ledger.close()


def test_requests_about_no_field_name_lines_unless_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())
    try:
        assert build_proposer(load_settings(), ledger, RuleExtractor()).forget_said_lines
        monkeypatch.setenv("FACTLEDGER_PROPOSALS__FORGET_SAID_LINES", "false")
        assert not build_proposer(load_settings(), ledger, RuleExtractor()).forget_said_lines
    finally:
        ledger.close()


def test_the_qa_readers_mentions_check_a_placement_where_the_settings_ask_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())
    judge = LearnedJudge.packaged()
    try:
        on = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert isinstance(on.placement_mentions, QaFieldMentions)  # by default (ADR 0218)
        assert on.placement_mentions.floor == PACKAGED_MENTION_FLOOR
        assert build_proposer(load_settings(), ledger, RuleExtractor()).placement_mentions is None
        monkeypatch.setenv("FACTLEDGER_PROPOSALS__FORGET_PLACEMENT_MENTIONS", "false")
        off = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert off.placement_mentions is None
        monkeypatch.setenv("FACTLEDGER_PROPOSALS__FORGET_PLACEMENT_MENTIONS", "true")
        # A deployment's reader file has margins of its own: no bar unless it is given one.
        own = {
            "kind": "learned",
            "qa_reader_path": str(PACKAGED_QA_READER),
            "qa_reader_sha256": PACKAGED_QA_READER_SHA256,
            "qa_reader_floor": 5.0,
        }
        monkeypatch.setenv("FACTLEDGER_EXTRACTOR", json.dumps(own))
        unset = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert unset.placement_mentions is None
        own["qa_reader_mention_floor"] = -12.5
        monkeypatch.setenv("FACTLEDGER_EXTRACTOR", json.dumps(own))
        given = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert isinstance(given.placement_mentions, QaFieldMentions)
        assert given.placement_mentions.floor == -12.5
        monkeypatch.setenv("FACTLEDGER_EXTRACTOR", json.dumps({"kind": "rule"}))
        rules = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert rules.placement_mentions is None
        heads = {"kind": "learned", "field_reader": "heads", "qa_reader_mention_floor": -12.5}
        monkeypatch.setenv("FACTLEDGER_EXTRACTOR", json.dumps(heads))
        with pytest.raises(SettingsError, match=r"qa_reader_mention_floor"):
            load_settings()
    finally:
        ledger.close()


def test_requests_to_forget_are_placed_by_both_encoders_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger = Ledger(popo_env(), keys=InMemoryKeyStore())
    judge = LearnedJudge.packaged()
    try:
        placed = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert isinstance(placed.placement_reading, MultilingualCloseness)
        # No judge notices no request: nothing to place, nothing loaded for it.
        assert build_proposer(load_settings(), ledger, RuleExtractor()).placement_reading is None
        monkeypatch.setenv("FACTLEDGER_PROPOSALS__FORGET_PLACEMENT", "heads")
        heads = build_proposer(load_settings(), ledger, RuleExtractor(), judge=judge)
        assert heads.placement_reading is None
        monkeypatch.setenv("FACTLEDGER_PROPOSALS__FORGET_PLACEMENT", "multilingual")
        with pytest.raises(SettingsError, match=r"proposals\.forget_placement"):
            load_settings()
    finally:
        ledger.close()


def test_a_misspelt_mode_or_slot_is_refused_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_PROPOSALS__MODE", "sometimes")
    with pytest.raises(SettingsError, match=r"proposals\.mode"):
        load_settings()
    monkeypatch.delenv("FACTLEDGER_PROPOSALS__MODE")
    monkeypatch.setenv(
        "FACTLEDGER_PROFILE_SCHEMAS", '{"lead": {"x": {"type": "text", "slots": ["Bad Slot"]}}}'
    )
    with pytest.raises(SettingsError, match="profile_schemas"):
        load_settings()


def test_the_model_is_named_by_its_extractor_and_version() -> None:
    assert model_actor(load_settings()) == Actor(ActorKind.MODEL, "learned@3.1")
    rules = load_settings(extractor={"kind": "rule"})
    assert model_actor(rules) == Actor(ActorKind.MODEL, "rule@3")
    llm = OpenAICompatibleExtractorSettings(base_url="http://llm:8080/v1", model="small-7b")
    assert model_actor(load_settings(extractor=llm)) == Actor(
        ActorKind.MODEL, "openai-compatible:small-7b@1"
    )


def test_the_learned_extractor_is_the_default_and_named_in_the_actor() -> None:
    settings = load_settings()  # no extractor configured: the default (ADR 0119)

    extractor = build_extractor(settings.extractor, httpx.AsyncClient())

    assert isinstance(extractor, LearnedExtractor)
    assert model_actor(settings) == Actor(
        ActorKind.MODEL, f"learned@{RuleExtractor.VERSION}.{LearnedExtractor.VERSION}"
    )


def test_learned_heads_of_ones_own_must_come_with_a_well_formed_sha256(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTOR",
        '{"kind": "learned", "heads_path": "/tmp/heads.npz", "heads_sha256": "not-a-digest"}',
    )

    with pytest.raises(SettingsError, match="heads_sha256"):
        load_settings()


def learned_from(monkeypatch: pytest.MonkeyPatch, extractor: str | None) -> LearnedExtractor:
    """The learned extractor the settings build: from `extractor` (JSON), or the default."""
    if extractor is not None:
        monkeypatch.setenv("FACTLEDGER_EXTRACTOR", extractor)
    built = build_extractor(load_settings().extractor, httpx.AsyncClient())
    assert isinstance(built, LearnedExtractor)
    return built


def test_the_learned_extractor_reads_fields_with_the_qa_reader_unless_told_the_heads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    default = learned_from(monkeypatch, None)
    heads = learned_from(monkeypatch, '{"kind": "learned", "field_reader": "heads"}')

    assert isinstance(default.judge, QaReadingJudge)
    assert default.asks_every_field
    assert isinstance(heads.judge, LearnedJudge)
    assert not heads.asks_every_field
    assert default.judge.inner is heads.judge  # one heads judge per process
    # Read-backs (ADR 0138) are an option, off by default; on, the QA reader reads them and
    # the judge itself reads the yes.
    assert default.read_backs is None
    assert heads.read_backs is None
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", '{"kind": "learned", "read_backs": true}')
    read_backs = build_extractor(load_settings().extractor, httpx.AsyncClient())
    assert isinstance(read_backs, LearnedExtractor)
    assert read_backs.read_backs is not None
    assert (read_backs.read_back_replies, read_backs.read_back_floor) == (None, None)


def test_a_bare_yes_to_a_value_said_back_is_dropped_where_the_settings_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    default = learned_from(monkeypatch, None)
    dropped = learned_from(monkeypatch, '{"kind": "learned", "bare_yeses": "dropped"}')

    assert default.said_back is None
    assert isinstance(dropped.said_back, QaFieldReader)  # the reader the extractor reads with
    assert isinstance(dropped.judge, QaReadingJudge)
    assert dropped.said_back is dropped.judge.reader
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", '{"kind": "learned", "bare_yeses": "maybe"}')
    with pytest.raises(SettingsError, match="bare_yeses"):
        load_settings()
    heads = '{"kind": "learned", "field_reader": "heads", "bare_yeses": "dropped"}'
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", heads)
    with pytest.raises(SettingsError, match="bare_yeses"):
        load_settings()


def test_a_read_backs_yes_may_be_the_pair_readers_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTOR",
        '{"kind": "learned", "read_backs": true, "read_back_yes": "pair_reader"}',
    )
    extractor = build_extractor(load_settings().extractor, httpx.AsyncClient())

    assert isinstance(extractor, LearnedExtractor)
    assert isinstance(extractor.judge, QaReadingJudge)
    assert isinstance(extractor.judge.inner, LearnedJudge)
    assert extractor.read_back_replies is extractor.judge.inner.pair_answers


def test_the_pair_head_on_the_held_value_reads_over_the_heads_embedder_when_turned_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", '{"kind": "learned", "qa_reader_held_change": true}')
    on = build_extractor(load_settings().extractor, httpx.AsyncClient())
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTOR", '{"kind": "learned", "qa_reader_held_change": false}'
    )
    off = build_extractor(load_settings().extractor, httpx.AsyncClient())

    assert isinstance(on, LearnedExtractor)
    assert isinstance(off, LearnedExtractor)
    assert isinstance(on.judge, QaReadingJudge)
    assert isinstance(off.judge, QaReadingJudge)
    assert isinstance(on.judge.inner, LearnedJudge)
    assert on.judge.held_change is not None
    assert on.judge.held_change.embedder is on.judge.inner.embedder
    assert off.judge.held_change is None


def _qa_judge(monkeypatch: pytest.MonkeyPatch, extractor: str) -> QaReadingJudge:
    """The QA reader's judge the extractor settings `extractor` build."""
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", extractor)
    built = build_extractor(load_settings().extractor, httpx.AsyncClient())
    assert isinstance(built, LearnedExtractor)
    assert isinstance(built.judge, QaReadingJudge)
    return built.judge


async def test_a_value_fit_head_whose_encoder_cannot_load_holds_the_session_for_later(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The shipped head reads spans with the multilingual encoder (ADR 0235): while its files
    cannot be read, reading an answer raises the error the sync holds an item on, rather than
    keeping or dropping answers unread."""
    monkeypatch.setattr(deferred_load, "RETRY_AFTER_S", 0.0)
    broken = UseMultilingualEmbedder(tmp_path, load_in_background=True)  # no files
    monkeypatch.setattr(judgement_bootstrap, "value_fit_encoder", lambda: broken)
    head = _qa_judge(monkeypatch, '{"kind": "learned"}').value_fit
    assert head is not None

    answer = ValueAnswer("allergies", "latex", -1.0, True, ("allergies",))
    with pytest.raises(ModelUnavailableError):
        await head.kept([answer])


def test_the_held_change_heads_threshold_is_the_files_unless_the_settings_give_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def head_of(extractor: str) -> HeldChangeHead | None:
        return _qa_judge(monkeypatch, extractor).held_change

    shipped = head_of('{"kind": "learned"}')
    chosen = head_of('{"kind": "learned", "held_change_min": 0.7}')

    assert shipped is not None
    assert chosen is not None
    assert shipped.changed_min == 0.9  # the shipped file's, chosen on kept-out cases (ADR 0145)
    assert chosen.changed_min == 0.7  # ADR 0233
    assert chosen.bar == shipped.bar


@pytest.mark.parametrize(
    ("extractor", "named"),
    [
        ('{"kind": "learned", "field_reader": "clauses"}', "field_reader"),
        (
            '{"kind": "learned", "field_reader": "heads", "qa_reader_floor": 5}',
            "qa_reader_floor",
        ),
        ('{"kind": "learned", "qa_reader_path": "/etc/reader.onnx"}', "qa_reader_sha256"),
        (
            '{"kind": "learned", "qa_reader_path": "/etc/reader.onnx", "qa_reader_sha256": "'
            + "0" * 64
            + '"}',
            "qa_reader_floor",
        ),
        ('{"kind": "learned", "qa_reader_floor": 99}', "qa_reader_floor"),
        (
            '{"kind": "learned", "field_reader": "heads", "qa_reader_list_floor": 6}',
            "qa_reader_list_floor",
        ),
        ('{"kind": "learned", "qa_reader_list_floor": -21}', "qa_reader_list_floor"),
        (
            '{"kind": "learned", "field_reader": "heads", "qa_reader_held_floor": 4}',
            "qa_reader_held_floor",
        ),
        (
            '{"kind": "learned", "field_reader": "heads", "qa_reader_span_slack": 1}',
            "qa_reader_span_slack",
        ),
        ('{"kind": "learned", "qa_reader_span_slack": -0.5}', "qa_reader_span_slack"),
        ('{"kind": "learned", "held_answer": "first"}', "held_answer"),
        (
            '{"kind": "learned", "field_reader": "heads", "read_back_floor": 0}',
            "read_back_floor",
        ),
        ('{"kind": "learned", "read_back_yes": "anyone"}', "read_back_yes"),
        ('{"kind": "learned", "read_back_yes": "pair_reader"}', "read_back_yes"),
        ('{"kind": "learned", "read_back_floor": 0}', "read_back_floor"),
        (
            '{"kind": "learned", "forget_reader": "none", "forget_reader_path": "f"}',
            "forget_reader_path",
        ),
        (
            '{"kind": "learned", "qa_reader_held_change": false, "held_change_path": "f"}',
            "held_change_path",
        ),
        (
            '{"kind": "learned", "qa_reader_held_change": false, "held_change_min": 0.7}',
            "held_change_min",
        ),
        ('{"kind": "learned", "held_change_min": 1.5}', "held_change_min"),
        ('{"kind": "learned", "answer_stance_path": "f"}', "answer_stance_path"),
        ('{"kind": "learned", "value_fit": "none", "value_fit_path": "f"}', "value_fit_path"),
        (
            '{"kind": "learned", "value_fit": "none", "value_fit_held_min": 0.5}',
            "value_fit_held_min",
        ),
        ('{"kind": "learned", "value_fit_held_min": 1.5}', "value_fit_held_min"),
        ('{"kind": "learned", "qa_reader_agreement_floor": 1}', "qa_reader_agreement_floor"),
        (
            '{"kind": "learned", "field_reader": "heads", "qa_reader_alone": true}',
            "qa_reader_alone",
        ),
        ('{"kind": "learned", "held_change_sha256": "abc"}', "held_change_sha256"),
    ],
)
def test_a_field_reader_setting_that_cannot_hold_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, extractor: str, named: str
) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", extractor)

    with pytest.raises(SettingsError, match=named):
        load_settings()


def test_spread_lists_come_with_their_own_fitted_list_floor() -> None:
    plain, spread = qa_field_reader(), qa_field_reader(spread_lists=True)
    given = qa_field_reader(floor=5.0, spread_lists=True)

    assert (plain.spread_lists, plain.list_floor) == (False, PACKAGED_QA_READER_LIST_FLOOR)
    assert (spread.spread_lists, spread.list_floor) == (True, PACKAGED_QA_READER_SPREAD_LIST_FLOOR)
    assert (given.spread_lists, given.floor, given.list_floor) == (
        True,
        5.0,
        PACKAGED_QA_READER_SPREAD_LIST_FLOOR,
    )


def reader_built_from(monkeypatch: pytest.MonkeyPatch, extractor: str) -> QaFieldReader:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", extractor)
    built = build_extractor(load_settings().extractor, httpx.AsyncClient())
    assert isinstance(built, LearnedExtractor)
    assert isinstance(built.judge, QaReadingJudge)
    return built.judge.reader


def test_the_packaged_reader_batches_its_windows_at_the_batched_floors_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = reader_built_from(monkeypatch, '{"kind": "learned"}')

    assert (reader.alone, reader.floor, reader.list_floor, reader.held_floor) == (
        False,
        PACKAGED_QA_READER_FLOOR,
        PACKAGED_QA_READER_LIST_FLOOR,
        PACKAGED_QA_READER_HELD_FLOOR,
    )


def test_read_alone_the_packaged_reader_takes_the_floors_chosen_on_reads_made_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR__KIND", "learned")
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR__QA_READER_ALONE", "true")
    settings = load_settings().extractor
    built = build_extractor(settings, httpx.AsyncClient())
    assert isinstance(built, LearnedExtractor)
    assert isinstance(built.judge, QaReadingJudge)
    reader = built.judge.reader

    assert (reader.alone, reader.floor, reader.list_floor, reader.held_floor) == (
        True,
        PACKAGED_QA_READER_ALONE_FLOOR,
        PACKAGED_QA_READER_ALONE_LIST_FLOOR,
        PACKAGED_QA_READER_ALONE_HELD_FLOOR,
    )


def test_read_alone_a_deployments_reader_keeps_the_floors_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reader = reader_built_from(
        monkeypatch,
        f'{{"kind": "learned", "qa_reader_alone": true, "qa_reader_path": "{PACKAGED_QA_READER}", '
        f'"qa_reader_sha256": "{PACKAGED_QA_READER_SHA256}", "qa_reader_floor": 5.25, '
        '"qa_reader_list_floor": 6.25}',
    )

    assert (reader.alone, reader.floor, reader.list_floor, reader.held_floor) == (
        True,
        5.25,
        6.25,
        None,
    )


def test_list_cuts_are_off_by_default_and_reach_the_packaged_and_a_deployments_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    default = reader_built_from(monkeypatch, '{"kind": "learned"}')
    packaged = reader_built_from(monkeypatch, '{"kind": "learned", "qa_reader_list_cuts": true}')
    own = reader_built_from(
        monkeypatch,
        f'{{"kind": "learned", "qa_reader_list_cuts": true, "qa_reader_path": '
        f'"{PACKAGED_QA_READER}", "qa_reader_sha256": "{PACKAGED_QA_READER_SHA256}", '
        '"qa_reader_floor": 5.5}',
    )

    # ADR 0162: read off the scores the file gives, so the floors stay the file's.
    assert (default.cut_lists, packaged.cut_lists, own.cut_lists) == (False, True, True)
    assert (packaged.floor, packaged.list_floor) == (default.floor, default.list_floor)


def test_the_span_slack_is_the_packaged_files_own_none_for_a_deployments_unless_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own_file = (
        f'"qa_reader_path": "{PACKAGED_QA_READER}", '
        f'"qa_reader_sha256": "{PACKAGED_QA_READER_SHA256}", "qa_reader_floor": 5.5'
    )
    packaged = reader_built_from(monkeypatch, '{"kind": "learned"}')
    packaged_set = reader_built_from(monkeypatch, '{"kind": "learned", "qa_reader_span_slack": 0}')
    floors_set = reader_built_from(monkeypatch, '{"kind": "learned", "qa_reader_held_floor": 4.0}')
    own = reader_built_from(monkeypatch, f'{{"kind": "learned", {own_file}}}')
    own_set = reader_built_from(
        monkeypatch, f'{{"kind": "learned", "qa_reader_span_slack": 1.5, {own_file}}}'
    )

    # ADR 0227: chosen on the shipped file's kept-out cases; another file's scores are its own.
    assert (packaged.span_slack, packaged_set.span_slack, floors_set.span_slack) == (
        PACKAGED_QA_READER_SPAN_SLACK,
        0.0,
        PACKAGED_QA_READER_SPAN_SLACK,
    )
    assert (own.span_slack, own_set.span_slack) == (0.0, 1.5)


def test_the_pair_head_is_on_by_default_with_the_packaged_reader_and_off_with_a_deployments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", '{"kind": "learned"}')
    packaged = build_extractor(load_settings().extractor, httpx.AsyncClient())
    # The packaged file named as a deployment's own: the shipped head knows only the packaged
    # reader's margins, so it is not read beside another file unless asked for.
    own_reader = (
        f'{{"kind": "learned", "qa_reader_path": "{PACKAGED_QA_READER}", '
        f'"qa_reader_sha256": "{PACKAGED_QA_READER_SHA256}", "qa_reader_floor": 5.5}}'
    )
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", own_reader)
    own = build_extractor(load_settings().extractor, httpx.AsyncClient())

    assert isinstance(packaged, LearnedExtractor)
    assert isinstance(own, LearnedExtractor)
    assert isinstance(packaged.judge, QaReadingJudge)
    assert isinstance(own.judge, QaReadingJudge)
    assert packaged.judge.held_change is not None
    assert own.judge.held_change is None


def test_the_pair_head_is_read_beside_a_deployments_reader_given_a_head_file_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The packaged head named as the deployment's own file: given, it is what they asked for.
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTOR",
        f'{{"kind": "learned", "qa_reader_path": "{PACKAGED_QA_READER}", '
        f'"qa_reader_sha256": "{PACKAGED_QA_READER_SHA256}", "qa_reader_floor": 5.5, '
        f'"held_change_path": "{PACKAGED_HELD_CHANGE_HEAD}", '
        f'"held_change_sha256": "{PACKAGED_HELD_CHANGE_HEAD_SHA256}"}}',
    )
    own = build_extractor(load_settings().extractor, httpx.AsyncClient())

    assert isinstance(own, LearnedExtractor)
    assert isinstance(own.judge, QaReadingJudge)
    assert own.judge.held_change is not None


def test_a_deployments_field_floors_are_read_beside_the_reader_they_were_fitted_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def floors_of(extractor: str) -> FieldFloors | None:
        monkeypatch.setenv("FACTLEDGER_EXTRACTOR", extractor)
        built = build_extractor(load_settings().extractor, httpx.AsyncClient())
        assert isinstance(built, LearnedExtractor)
        assert isinstance(built.judge, QaReadingJudge)
        return built.judge.reader.field_floors

    def given(reader_sha256: str) -> str:
        path = tmp_path / f"floors-{reader_sha256[:4]}.json"
        path.write_text(json.dumps({"reader_sha256": reader_sha256, "single": {"plan": 3.0}}))
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        return (
            f'{{"kind": "learned", "field_floors_path": "{path}", '
            f'"field_floors_sha256": "{sha256}"}}'
        )

    floors = floors_of(given(PACKAGED_QA_READER_SHA256))

    assert floors_of('{"kind": "learned"}') is None
    assert floors is not None
    assert floors.of("plan", is_list=False) == 3.0
    with pytest.raises(QaReaderIntegrityError, match="another reader"):
        floors_of(given("0" * 64))


def test_a_field_floors_file_without_its_pin_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", '{"kind": "learned", "field_floors_path": "f.json"}')

    with pytest.raises(SettingsError, match="field_floors_sha256"):
        load_settings()


def test_the_value_fit_head_is_on_by_default_and_the_shipped_or_a_pinned_file_when_chosen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def head_of(extractor: str) -> ValueFitHead | None:
        return _qa_judge(monkeypatch, extractor).value_fit

    own = tmp_path / "value-fit.npz"
    own.write_bytes(PACKAGED_VALUE_FIT.read_bytes())
    graph = PACKAGED_VALUE_FIT.parent / SPAN_VERIFIER_FILE  # the file names it, beside it
    (tmp_path / SPAN_VERIFIER_FILE).write_bytes(graph.read_bytes())
    sha256 = hashlib.sha256(own.read_bytes()).hexdigest()

    shipped = head_of('{"kind": "learned"}')  # ADR 0223
    assert shipped is not None
    assert shipped.embedder.model_id == UseMultilingualEmbedder.model_id  # ADR 0235
    assert shipped.held_min is None  # ADR 0231, rejected: held answers pass as read
    held_bar = head_of('{"kind": "learned", "value_fit_held_min": 0.5}')
    assert held_bar is not None
    assert held_bar.held_min == 0.5
    assert head_of('{"kind": "learned", "value_fit": "none"}') is None
    # Beside the heads' agreement, which reads under the floor by its own bars, it stays off.
    assert head_of('{"kind": "learned", "qa_reader_agreement": true}') is None
    # Nor beside read-backs, never measured with it; either may still be chosen with it.
    assert head_of('{"kind": "learned", "read_backs": true}') is None
    assert head_of('{"kind": "learned", "read_backs": true, "value_fit": "learned"}') is not None
    assert head_of('{"kind": "learned", "value_fit": "learned"}') is not None
    # A deployment's reader file has margins of its own: off unless a value-fit file is given.
    own_reader = (
        f'"qa_reader_path": "{PACKAGED_QA_READER}", '
        f'"qa_reader_sha256": "{PACKAGED_QA_READER_SHA256}", "qa_reader_floor": 5.0'
    )
    assert head_of(f'{{"kind": "learned", {own_reader}}}') is None
    fitted_for_it = head_of(
        f'{{"kind": "learned", {own_reader}, "value_fit_path": "{own}",'
        f' "value_fit_sha256": "{sha256}"}}'
    )
    assert fitted_for_it is not None
    chosen = head_of(
        f'{{"kind": "learned", "value_fit": "learned", "value_fit_path": "{own}",'
        f' "value_fit_sha256": "{sha256}"}}'
    )
    assert chosen is not None
    assert chosen.held_min is None
    with pytest.raises(ValueFitIntegrityError, match="sha256 differs"):
        head_of(
            f'{{"kind": "learned", "value_fit": "learned", "value_fit_path": "{own}",'
            f' "value_fit_sha256": "{"0" * 64}"}}'
        )


@pytest.mark.parametrize(
    ("extractor", "named"),
    [
        ('{"kind": "learned", "value_fit_path": "f.npz"}', "value_fit_sha256"),
        ('{"kind": "learned", "value_fit": "learned", "field_reader": "heads"}', "value_fit"),
        (
            '{"kind": "learned", "value_fit": "learned", "qa_reader_agreement": true}',
            "qa_reader_agreement",
        ),
    ],
)
def test_a_value_fit_the_settings_could_not_read_is_refused_naming_the_field(
    monkeypatch: pytest.MonkeyPatch, extractor: str, named: str
) -> None:
    monkeypatch.setenv("FACTLEDGER_EXTRACTOR", extractor)

    with pytest.raises(SettingsError, match=named):
        load_settings()
