"""The rule extractor, one rule at a time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.guidance import GuidanceError, load_guidance
from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, KnownFact
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

WHEN = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)  # a Tuesday
EXTRACTOR = RuleExtractor()


def extract(*messages: tuple[str, str], known: tuple[KnownFact, ...] = ()) -> list[ExtractedFact]:
    transcript = [Message(Role(role), text) for role, text in messages]
    return EXTRACTOR.extract_now(ExtractionRequest(transcript, WHEN, known))


def by_slot(facts: list[ExtractedFact], slot: str) -> ExtractedFact:
    matching = [f for f in facts if f.slot == slot]
    assert len(matching) == 1, [f.slot for f in facts]
    return matching[0]


async def test_extract_is_the_async_face_of_extract_now() -> None:
    request = ExtractionRequest([Message(Role.SUBJECT, "We work with Supplier A.")], WHEN)
    assert await EXTRACTOR.extract(request) == EXTRACTOR.extract_now(request)


def test_an_agent_introduction_never_becomes_a_fact() -> None:
    facts = extract(
        ("agent", "Hi, I'm Ana from Acme. I work at Acme and I love helping customers."),
        ("subject", "Hi Ana."),
    )
    assert facts == []


def test_system_and_staff_lines_never_become_facts() -> None:
    facts = extract(
        ("system", "Our budget is 90k. The customer moved to Paris."),
        ("staff", "We use Supplier Z for everything."),
        ("subject", "We work with Supplier A."),
    )
    assert [(f.text, f.source_indexes) for f in facts] == [("works with Supplier A", (2,))]


def test_a_hedged_conditional_reply_is_an_intent_with_its_condition_verbatim() -> None:
    facts = extract(
        ("agent", "Would you like to upgrade to the Pro plan?"),
        ("subject", "Maybe next quarter, if the pricing works."),
    )
    [fact] = facts
    assert fact.condition == "if the pricing works"
    assert fact.text.startswith("may upgrade to the Pro plan next quarter (2026-Q2)")
    assert fact.slot is not None
    assert fact.slot.startswith("intent:")
    assert fact.relation is None
    assert fact.source_indexes == (0, 1)


def test_a_hedged_statement_keeps_its_hedge_and_updates_nothing() -> None:
    known = (KnownFact("m1", "works with Supplier A", "supplier"),)
    [fact] = extract(("subject", "We might switch to Supplier C."), known=known)
    assert fact.condition == "might"
    assert fact.relation is None
    assert fact.text == "may switch to Supplier C"


def test_a_switch_updates_the_known_fact_of_its_slot() -> None:
    known = (KnownFact("m1", "works with Supplier A", "supplier"),)
    facts = extract(("subject", "We switched to Supplier B."), known=known)
    fact = by_slot(facts, "supplier")
    assert fact.text == "switched to Supplier B"
    assert fact.relation is RelationKind.UPDATES
    assert fact.related_to == ("m1",)


def test_no_longer_updates_its_slot_even_when_nothing_is_known() -> None:
    [fact] = extract(("subject", "We no longer work with Acme Corp."))
    assert (fact.slot, fact.relation) == ("supplier", RelationKind.UPDATES)
    assert fact.text == "no longer works with Acme Corp"


def test_a_new_budget_updates_the_earlier_one_of_the_same_transcript() -> None:
    facts = extract(
        ("subject", "Our budget is 50k."),
        ("agent", "Noted."),
        ("subject", "Actually our new budget is 80k a month."),
    )
    first, second = facts
    assert (first.slot, second.slot) == ("budget", "budget")
    assert second.relation is RelationKind.UPDATES
    assert second.related_to == (first.key,)
    assert second.text == "budget is 80k a month"


def test_a_plain_statement_of_a_single_valued_slot_with_nothing_known_is_not_an_update() -> None:
    [fact] = extract(("subject", "We work with Supplier A."))
    assert fact.relation is None


def test_because_extends_the_fact_it_explains() -> None:
    facts = extract(("subject", "We switched to Supplier B because Supplier A kept being late."))
    switch = by_slot(facts, "supplier")
    [reason] = [f for f in facts if f.relation is RelationKind.EXTENDS]
    assert reason.related_to == (switch.key,)
    assert "because Supplier A kept being late" in reason.text
    assert not reason.is_inference


def test_a_bare_because_reply_extends_the_previous_fact() -> None:
    facts = extract(
        ("subject", "We moved to Lisbon."),
        ("agent", "Why?"),
        ("subject", "Because the office there is bigger."),
    )
    move, reason = facts
    assert reason.relation is RelationKind.EXTENDS
    assert reason.related_to == (move.key,)
    assert reason.source_indexes == (0, 2)


def test_a_configured_rule_derives_an_inferred_conclusion() -> None:
    known = (KnownFact("m1", "works with Supplier A", "supplier"),)
    facts = extract(
        ("subject", "We switched to Supplier B. Our deliveries were always late."), known=known
    )
    derived = by_slot(facts, "insight:delivery_reliability")
    assert derived.is_inference
    assert derived.relation is RelationKind.DERIVES
    assert derived.text == "delivery reliability matters to them"
    assert set(derived.related_to) == {by_slot(facts, "supplier").key, facts[1].key}
    assert [f for f in facts if f.is_inference] == [derived]


@pytest.mark.parametrize(
    ("said", "resolved"),
    [
        ("We moved to Porto last month.", "last month (2026-02)"),
        ("I will visit the factory tomorrow.", "tomorrow (2026-03-11)"),
        ("We plan to expand in two weeks.", "in two weeks (2026-03-24)"),
        ("I went to a pottery class yesterday.", "yesterday (2026-03-09)"),
        ("We plan to hire next year.", "next year (2027)"),
    ],
)
def test_relative_dates_resolve_against_the_interaction_and_keep_their_words(
    said: str, resolved: str
) -> None:
    [fact] = extract(("subject", said))
    assert resolved in fact.text


def test_a_past_change_is_valid_from_its_resolved_date() -> None:
    [fact] = extract(("subject", "We moved to Porto last month."))
    assert fact.valid_from == datetime(2026, 2, 1, tzinfo=UTC)


def test_names_give_no_pronouns_or_gender() -> None:
    facts = extract(("subject", "My name is Maria Lopez. I work at Globex and I love sailing."))
    texts = " ".join(f.text for f in facts).lower()
    assert {f.slot for f in facts} == {"name", "employer", "preference:sailing"}
    for word in ("she", "her", "he", "his", "woman", "female", "man"):
        assert f" {word} " not in f" {texts} "


def test_one_message_can_hold_several_facts() -> None:
    facts = extract(("subject", "We use Supplier A and our budget is 50k. We have 12 employees."))
    assert [f.slot for f in facts] == ["supplier", "budget", "team_size"]
    assert all(f.source_indexes == (0,) for f in facts)


def test_chit_chat_still_yields_statements_close_to_the_words_with_provenance() -> None:
    facts = extract(
        ("agent", "Hey Caroline! How have you been?"),
        ("subject", "Hey Mel! I've been painting a lot lately. What about you?"),
        ("agent", "Busy with the kids."),
        ("subject", "I went to a support group yesterday and it was so powerful."),
    )
    assert [(f.text, f.source_indexes) for f in facts] == [
        ("has been painting a lot lately", (1,)),
        ("went to a support group yesterday (2026-03-09) and it was so powerful", (3,)),
    ]


def test_questions_greetings_and_thanks_yield_nothing() -> None:
    facts = extract(("subject", "Hello there! Thanks so much. Can you send the invoice? Great."))
    assert facts == []


def test_fact_text_has_no_quotation_marks() -> None:
    [fact] = extract(("subject", 'I really love "slow travel" when I can.'))
    assert '"' not in fact.text
    assert "slow travel" in fact.text


def test_keys_are_local_and_relations_name_existing_keys_or_known_ids() -> None:
    known = (KnownFact("m9", "budget is 10k", "budget"),)
    facts = extract(
        ("subject", "Our budget is now 20k because sales grew. We no longer like long calls."),
        known=known,
    )
    keys = {f.key for f in facts}
    assert [f.key for f in facts] == [f"f{i}" for i in range(len(facts))]
    for fact in facts:
        assert set(fact.related_to) <= keys | {"m9"}


def test_extraction_logs_no_content() -> None:
    with structlog.testing.capture_logs() as logs:
        extract(("subject", "My secret project is called Nightingale and I love it."))
    assert logs
    assert "Nightingale" not in repr(logs)


def test_a_leading_date_moves_behind_the_statement() -> None:
    [fact] = extract(("subject", "Last week I went to a pride parade."))
    assert fact.text == "went to a pride parade last week (week of 2026-03-02)"


def test_since_as_a_time_is_not_a_reason() -> None:
    facts = extract(
        ("subject", "I have been painting since we last spoke. I moved here since 2020.")
    )
    assert all(f.relation is not RelationKind.EXTENDS for f in facts)
    assert len(facts) == 2


def test_since_as_a_reason_extends() -> None:
    facts = extract(("subject", "We relocated to Porto since rent in Lisbon got too high."))
    assert [f.relation for f in facts] == [RelationKind.UPDATES, RelationKind.EXTENDS]


@pytest.mark.parametrize(
    "reaction",
    ["That charity race sounds great, Mel!", "Aww, that's so sweet!", "I totally agree, Melanie."],
)
def test_reactions_to_the_other_speaker_are_not_facts(reaction: str) -> None:
    assert extract(("subject", reaction)) == []


def test_a_statement_only_about_the_listener_is_not_a_fact_about_the_subject() -> None:
    assert extract(("subject", "You are doing an awesome job with your family.")) == []


def test_the_rest_of_a_sentence_beside_a_slot_is_kept() -> None:
    facts = extract(("subject", "We're a clinic with 25 staff."))
    assert [(f.text, f.slot) for f in facts] == [
        ("has a team of 25", "team_size"),
        ("is a clinic", None),
    ]


def test_a_user_guidance_file_replaces_the_packaged_one(tmp_path: Path) -> None:
    guidance = tmp_path / "bakery.yaml"
    guidance.write_text(
        """
slots:
  - name: favourite_bread
    patterns:
      - match: "\\\\bI (?:always )?buy (?:the )?{VALUE}"
        text: "buys {value}"
""",
        encoding="utf-8",
    )
    custom = RuleExtractor.from_guidance_file(guidance)
    request = ExtractionRequest([Message(Role.SUBJECT, "I always buy the rye loaf.")], WHEN)
    [fact] = custom.extract_now(request)
    assert (fact.text, fact.slot) == ("buys rye loaf", "favourite_bread")


def test_a_malformed_guidance_file_is_rejected_by_entry_name(tmp_path: Path) -> None:
    guidance = tmp_path / "bad.yaml"
    guidance.write_text(
        "slots:\n  - name: x\n    patterns:\n      - {match: 'no group', text: t}\n"
    )
    with pytest.raises(GuidanceError, match=r"slots\.x"):
        load_guidance(guidance)


def test_a_past_event_in_plain_words_is_dated_but_a_plan_is_not() -> None:
    went, plan = extract(
        ("subject", "I went to a pottery class yesterday. Maybe I will try painting next week.")
    )
    assert went.valid_from == datetime(2026, 3, 9, tzinfo=UTC)
    assert plan.valid_from is None


async def test_a_long_transcript_extracted_in_a_thread_gives_the_same_facts() -> None:
    said = [Message(Role.SUBJECT, f"I visited museum number {i} last week.") for i in range(30)]
    request = ExtractionRequest(said, WHEN)
    assert await EXTRACTOR.extract(request) == EXTRACTOR.extract_now(request)


def test_since_before_a_past_event_is_a_time_but_before_a_present_one_a_reason() -> None:
    [fact] = extract(("subject", "I have grown a lot since I started painting."))
    assert fact.relation is None
    facts = extract(("subject", "We use Supplier A since it is cheaper."))
    assert [f.relation for f in facts] == [None, RelationKind.EXTENDS]


def test_a_new_thing_liked_is_not_an_update_but_no_longer_liking_is() -> None:
    known = (KnownFact("m1", "likes cold calls", "preference:cold_calls"),)
    liked, stopped = extract(
        ("subject", "I like to discover new places. I no longer like cold calls."), known=known
    )
    assert liked.relation is None
    assert (stopped.relation, stopped.related_to) == (RelationKind.UPDATES, ("m1",))


def test_a_mid_sentence_i_agrees_with_the_subject() -> None:
    [fact] = extract(("subject", "Sometimes it feels like I really miss the sea."))
    assert fact.text == "Sometimes it feels like the subject really misses the sea"


@pytest.mark.parametrize(
    ("question", "reply", "note"),
    [
        (
            "Would you consider a three-year contract?",
            "Maybe.",
            "may consider a three-year contract",
        ),
        (
            "Are you thinking of moving offices?",
            "Yes, next year.",
            "plans on moving offices next year",
        ),
        ("Will you renew?", "Probably.", "may renew"),
    ],
)
def test_a_bare_reply_states_the_intent_its_question_names(
    question: str, reply: str, note: str
) -> None:
    [fact] = extract(("agent", question), ("subject", reply))
    assert fact.text.startswith(note)


def test_a_bare_reply_to_a_question_about_a_state_states_nothing() -> None:
    assert extract(("agent", "Are you based in Berlin?"), ("subject", "Probably.")) == []


def test_a_change_told_as_a_second_verb_still_updates_its_slot() -> None:
    known = (KnownFact("m1", "works at Hooli", "employer"),)
    facts = extract(("subject", "I left Hooli and then joined Pied Piper."), known=known)
    joined = by_slot(facts, "employer")
    assert (joined.text, joined.relation) == ("joined Pied Piper", RelationKind.UPDATES)
    assert [f.text for f in facts if f.slot is None] == ["left Hooli"]


@pytest.mark.parametrize(
    ("said", "slot", "value"),
    [
        ("Most of our glassware comes from Brightwater Supply.", "supplier", "Brightwater Supply"),
        ("We order our beans from Kestrel Roasters.", "supplier", "Kestrel Roasters"),
        ("Our carrier is Lynx Parcel.", "supplier", "Lynx Parcel"),
        ("We ship all our samples with Wren Express.", "supplier", "Wren Express"),
        ("The board approved around 25k for the rollout.", "budget", "25k"),
        ("We have roughly 60k to spend.", "budget", "60k"),
        ("Procurement cut our budget to 18k.", "budget", "18k"),
        ("We are a team of about twelve.", "team_size", "twelve"),
        ("There are 9 of us.", "team_size", "9"),
        ("We are still on the Starter plan.", "plan", "Starter"),
        ("I started at Redwood Analytics.", "employer", "Redwood Analytics"),
        ("Ring me on my landline.", "contact_channel", "landline"),
        ("WhatsApp works best for me.", "contact_channel", "WhatsApp"),
    ],
)
def test_everyday_first_statements_fill_their_slot(said: str, slot: str, value: str) -> None:
    fact = by_slot(extract(("subject", said)), slot)
    assert fact.value == value


@pytest.mark.parametrize(
    "said",
    [
        "The mobile app freezes whenever we scan a barcode.",
        "Your invoices always arrive late.",
        "The new portal was a nightmare.",
        "The cartons arrived dented.",
    ],
)
def test_a_complaint_needs_no_complaint_verb(said: str) -> None:
    [fact] = [f for f in extract(("subject", said)) if (f.slot or "").startswith("complaint:")]
    assert fact.text.startswith("complained that ")


def test_a_complaint_given_as_a_reason_is_a_complaint_too() -> None:
    facts = extract(("subject", "We left Supplier A because their invoices were always wrong."))
    assert any((f.slot or "").startswith("complaint:") for f in facts)


def test_price_said_to_decide_is_an_inferred_price_insight() -> None:
    facts = extract(("subject", "Honestly, pricing is what decides it."))
    insight = by_slot(facts, "insight:price_sensitivity")
    assert insight.is_inference
