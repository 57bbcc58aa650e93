"""A reply's opening is read apart from the rest: people answer first, then chat."""

from __future__ import annotations

import numpy as np

from factledger.adapters.judgement.features import LEAD_WORDS, lead_of, reply_features


def test_a_reply_opens_with_the_words_before_its_first_punctuation_mark() -> None:
    assert lead_of("Sí, desde enero. ¿Necesita la tarjeta nueva?") == "Sí"
    assert lead_of("That's it, we moved in on the 28th.") == "That's it"
    assert lead_of("Yes - and about time too") == "Yes"
    assert lead_of("  Genau  die Zusage kam gestern") == "Genau die Zusage kam gestern"


def test_an_opening_is_at_most_a_few_words_and_never_empty() -> None:
    long = "well I suppose that could be right if you ask me honestly"
    assert lead_of(long) == " ".join(long.split()[:LEAD_WORDS])
    assert lead_of("...yes") == "...yes"
    assert lead_of("ok") == "ok"


def test_reply_features_are_the_whole_replys_then_its_openings() -> None:
    replies = ["Ja, seit November. Danke!", "mhm"]
    whole = np.ones((2, 3), np.float32)
    opening = np.full((2, 3), 2.0, np.float32)

    x = reply_features(whole, opening, replies, buckets=8)

    assert x.shape == (2, 2 * (3 + 8))
    np.testing.assert_array_equal(x[:, :3], whole)
    np.testing.assert_array_equal(x[:, 11:14], opening)
    # "mhm" has no punctuation: its opening is itself, so both halves' n-grams agree
    np.testing.assert_allclose(x[1, 3:11], x[1, 14:22])
    assert not np.allclose(x[0, 3:11], x[0, 14:22])
