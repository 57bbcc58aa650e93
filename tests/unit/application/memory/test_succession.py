"""ADR 0047: a fact replacing another in its slot inherits the words of what the slot is for,
never the replaced value's."""

from __future__ import annotations

from collections import Counter

from factledger.application.memory.lexical import lexical_terms
from factledger.application.memory.succession import SlotKeywords, succeed

SLOT = "supplier"


def first(text: str, source: str, value: str | None) -> SlotKeywords:
    """A slot's first fact, as a backend stores it."""
    done = succeed(lexical_terms(text, source, None, SLOT), text, value, None)
    return SlotKeywords(terms=frozenset(done.terms), handed_on=done.handed_on)


def kept(text: str, source: str, value: str | None, replaced: SlotKeywords) -> SlotKeywords:
    done = succeed(lexical_terms(text, source, None, SLOT), text, value, replaced)
    return SlotKeywords(terms=frozenset(done.terms), handed_on=done.handed_on)


KESTREL_TEXT = "works with Kestrel for their boxes"
KESTREL_SAID = "We work with Kestrel for our boxes."
KESTREL = first(KESTREL_TEXT, KESTREL_SAID, "Kestrel")
VIREO_TEXT = "works with Vireo Wraps"
VIREO_SAID = "We now work with Vireo Wraps."
LARKSPUR = "works with Larkspur"


def test_a_fact_that_replaces_another_inherits_what_the_slot_is_for() -> None:
    own = lexical_terms(VIREO_TEXT, VIREO_SAID, None, SLOT)

    done = succeed(own, VIREO_TEXT, "Vireo Wraps", KESTREL)

    assert "box" in done.terms
    assert "kestrel" not in done.terms


def test_what_a_fact_hands_on_holds_no_word_of_its_value() -> None:
    assert "kestrel" not in KESTREL.handed_on
    assert "box" in KESTREL.handed_on


def test_the_new_fact_keeps_its_own_counts_and_inherits_each_word_once() -> None:
    own = Counter({"supplier": 2, "box": 3, "vireo": 1})

    handing = SlotKeywords(terms={"box", "carton"}, handed_on={"box", "carton"})

    done = succeed(own, "works with Vireo", "Vireo", handing)

    assert done.terms == Counter({"supplier": 2, "box": 3, "vireo": 1, "carton": 1})


def test_only_the_words_of_the_note_are_handed_on_not_its_source_or_the_question_it_answered() -> (
    None
):
    source = "And on the business side? We work with Kestrel for our boxes, it is a family firm."
    kestrel = first(KESTREL_TEXT, source, "Kestrel")

    assert "business" in set(lexical_terms(KESTREL_TEXT, source, None, SLOT))
    assert "box" in kestrel.handed_on
    assert not {"business", "family", "firm"} & kestrel.handed_on


def test_a_third_value_inherits_through_the_second() -> None:
    vireo = kept(VIREO_TEXT, VIREO_SAID, "Vireo Wraps", KESTREL)

    third = succeed(
        lexical_terms(LARKSPUR, "Larkspur it is.", None, SLOT), LARKSPUR, "Larkspur", vireo
    )

    assert "box" in third.terms
    assert not {"kestrel", "vireo", "wrap"} & set(third.terms)


def test_a_replaced_value_the_new_note_repeats_stops_there() -> None:
    vireo = kept(
        "works with Vireo Wraps instead of Kestrel",
        "We left Kestrel and work with Vireo Wraps.",
        "Vireo Wraps",
        KESTREL,
    )

    third = succeed(lexical_terms(LARKSPUR, "", None, SLOT), LARKSPUR, "Larkspur", vireo)

    assert "kestrel" in vireo.terms  # its own note said it, as before this rule
    assert "kestrel" not in vireo.handed_on
    assert "kestrel" not in third.terms


def test_a_fact_without_an_isolated_value_hands_on_only_what_it_inherited() -> None:
    unknown = first(KESTREL_TEXT, KESTREL_SAID, None)
    assert unknown.handed_on == frozenset()

    relay = kept("works with someone new", "", None, KESTREL)
    assert "box" in relay.handed_on
    assert "kestrel" not in relay.handed_on


def test_a_fact_that_replaces_nothing_keeps_its_own_keywords() -> None:
    own = lexical_terms("works with Kestrel", "We work with Kestrel.", None, SLOT)

    assert succeed(own, "works with Kestrel", "Kestrel", None).terms == own


def test_the_same_facts_give_the_same_terms_however_often_they_are_computed() -> None:
    own = lexical_terms(VIREO_TEXT, VIREO_SAID, None, SLOT)

    once = succeed(own, VIREO_TEXT, "Vireo Wraps", KESTREL)
    assert once == succeed(Counter(own), VIREO_TEXT, "Vireo Wraps", KESTREL)
