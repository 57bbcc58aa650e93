"""ADR 0047: a fact replacing another in its slot inherits the words of what the slot is for,
never the replaced value's."""

from __future__ import annotations

from collections import Counter

from factledger.application.memory.lexical import lexical_terms
from factledger.application.memory.succession import SlotKeywords, succeed

SLOT = "supplier"


def first(text: str, source: str, value: str | None) -> SlotKeywords:
    """A slot's first fact, as a backend stores it."""
    done = succeed(lexical_terms(text, source, None, SLOT), value, None)
    return SlotKeywords(terms=frozenset(done.terms), handed_on=done.handed_on)


def kept(text: str, source: str, value: str | None, replaced: SlotKeywords) -> SlotKeywords:
    done = succeed(lexical_terms(text, source, None, SLOT), value, replaced)
    return SlotKeywords(terms=frozenset(done.terms), handed_on=done.handed_on)


KESTREL_TEXT = "works with Kestrel for their boxes"
KESTREL_SAID = "We work with Kestrel for our boxes."
KESTREL = first(KESTREL_TEXT, KESTREL_SAID, "Kestrel")


def test_a_fact_that_replaces_another_inherits_what_the_slot_is_for() -> None:
    own = lexical_terms("works with Vireo Wraps", "We now work with Vireo Wraps.", None, SLOT)

    done = succeed(own, "Vireo Wraps", KESTREL)

    assert "box" in done.terms
    assert "kestrel" not in done.terms


def test_what_a_fact_hands_on_holds_no_word_of_its_value() -> None:
    assert "kestrel" not in KESTREL.handed_on
    assert "box" in KESTREL.handed_on


def test_the_new_fact_keeps_its_own_counts_and_inherits_each_word_once() -> None:
    own = Counter({"supplier": 2, "box": 3, "vireo": 1})

    done = succeed(own, "Vireo", SlotKeywords(terms={"box", "carton"}, handed_on={"box", "carton"}))

    assert done.terms == Counter({"supplier": 2, "box": 3, "vireo": 1, "carton": 1})


def test_a_third_value_inherits_through_the_second() -> None:
    vireo = kept("works with Vireo Wraps", "We now work with Vireo Wraps.", "Vireo Wraps", KESTREL)

    third = succeed(
        lexical_terms("works with Larkspur", "Larkspur it is.", None, SLOT), "Larkspur", vireo
    )

    assert "box" in third.terms
    assert not {"kestrel", "vireo", "wrap"} & set(third.terms)


def test_a_replaced_value_the_new_sentence_repeats_stops_there() -> None:
    vireo = kept(
        "works with Vireo Wraps",
        "We left Kestrel and work with Vireo Wraps.",
        "Vireo Wraps",
        KESTREL,
    )

    third = succeed(lexical_terms("works with Larkspur", "", None, SLOT), "Larkspur", vireo)

    assert "kestrel" in vireo.terms  # its own sentence said it, as before this rule
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

    assert succeed(own, "Kestrel", None).terms == own


def test_the_same_facts_give_the_same_terms_however_often_they_are_computed() -> None:
    own = lexical_terms("works with Vireo Wraps", "We now work with Vireo Wraps.", None, SLOT)

    assert succeed(own, "Vireo Wraps", KESTREL) == succeed(Counter(own), "Vireo Wraps", KESTREL)
