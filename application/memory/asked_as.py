"""The words a question about each kind of fact tends to use: a packaged lexicon.

A slot fact is a short note ("moved to Lucca", "works with Vireo Wraps"); the one who asks
about it rarely repeats its words ("Which town are they in?", "Who supplies their cartons?").
The slot's name already joins the fact's keywords; this lexicon adds, per slot, the
words people ask about that kind of fact with, so memories-mode's keyword lift meets a
question that shares no word with the note or the sentence it came from.

- Keyed by the guidance's slot names (`adapters/extraction/rules/guidance.yaml`); a keyed slot
  ("allergy:peanuts") uses its kind. Intents get none: their topic is open.
- Words are written for the kind of fact, never for a question set: generic nouns and verbs
  of asking about where one lives, who one works for, who supplies one, and so on. A word that
  means several kinds ("work", "with", "job") is in one kind at most, so a question about one
  kind lifts facts of that kind only; diet and allergy share their words of eating, both being
  about food. "company" and "firm" stay with the employer although a supplier is a company
  too: leaving them out cost more answers than the wrong notes it saved.
- Applied at ingest to the keywords only: the query path and the fact's vector are unchanged,
  and the lift is bounded as before (`LEXICAL_WEIGHT` times the share of the query's keyword
  weight that the fact holds).
"""

from __future__ import annotations

from factledger.application.memory.scoring import keyword_tokens

ASKED_AS: dict[str, str] = {
    "name": "name called call named",
    "location": "city town place live lives living located based reside resides residence "
    "home settled area region country where",
    "employer": "employer employs employed company firm job payroll organisation "
    "organization workplace",
    "job_title": "role title position occupation profession career",
    "supplier": "supplier suppliers supplies supply supplying vendor vendors provider "
    "provides providing source sources sourcing buy buys purchase purchases partner",
    "budget": "budget money spend spending afford cost price funds annual yearly year cap "
    "limit much",
    "plan": "plan subscription tier package licence license",
    "team_size": "team staff employees people headcount size many",
    "contact_channel": "contact reach email phone message channel",
    "diet": "diet eat eats eating food vegetarian vegan meals",
    "allergy": "allergy allergies allergic intolerance intolerant react reaction sensitive "
    "avoid eat food dietary restriction restrictions",
    "preference": "like likes prefer prefers preference favourite favorite enjoy enjoys",
    "complaint": "complaint complaints problem problems issue issues unhappy wrong",
    "priority": "priority priorities important matters care cares most",
}


# A fact with no slot ("their cat is called Pixel", "ships with DPD") says its kind with a word
# of its own: each such word brings the words people ask about that kind with. Keyed by the
# fact's own words only (never its source sentence, where "we work with" would bring an
# employer's words to a supplier). Words that name several kinds ("work", "with") have no entry.
_PET = "pet pets animal animals"
_PET_KINDS = "dog dogs puppy cat cats kitten parrot rabbit tortoise hamster horse budgie"
_HOBBY = "hobby hobbies pastime pastimes leisure fun free spare time weekend weekends interest"
_SHIPPING = (
    "courier couriers carrier delivery deliveries deliver delivers shipping ship "
    "ships parcel parcels package packages orders logistics"
)
_CHILD = "child children kid kids daughter son family"
RELATED: dict[str, str] = {
    **dict.fromkeys(_PET_KINDS.split(), _PET),
    **dict.fromkeys(("hobby", "hobbies", "pastime", "pastimes"), _HOBBY),
    **dict.fromkeys(
        ("ships", "shipping", "courier", "carrier", "deliveries", "delivers"), _SHIPPING
    ),
    **dict.fromkeys(("daughter", "son", "child", "children", "kid", "kids"), _CHILD),
    "plays": "play plays playing instrument music lessons sport game",
    "favourite": "favourite favorite enjoy enjoys like likes love loves",
    "likes": "like likes enjoy enjoys love loves favourite favorite",
    "loves": "love loves like likes enjoy enjoys favourite favorite",
}


def related_words(fact_text: str) -> str | None:
    """The lexicon's words for the kinds a fact's own words name (`RELATED`)."""
    found = dict.fromkeys(
        word for token in keyword_tokens(fact_text) for word in RELATED.get(token, "").split()
    )
    return " ".join(keyword_tokens(" ".join(found))) or None


def asked_as_words(slot_name: str | None) -> str | None:
    """The lexicon's words for a slot's kind ("allergy:peanuts" -> its "allergy" words)."""
    if not slot_name:
        return None
    words = ASKED_AS.get(slot_name.split(":", 1)[0].replace(" ", "_"))
    return " ".join(keyword_tokens(words)) or None if words else None
