"""Questions an agent may ask to have a pending proposal confirmed or declined.

- A paraphrase in the second person, never the subject's quotation: a note the model wrote
  about the subject ("no longer works with Northwind") is turned to "you no longer work with
  Northwind"; a condition kept in the subject's words ("if we close the round") to "if you
  close the round".
- Phrased per operation and value type: an unset asks to remove, an append to add, a removal
  to take items off, a boolean field (`has_`, `is_`, `uses_`...) says what is true of "you",
  money and dates read as written.
- Only what the subject said is put to them (`askable`): an inference goes to reviewers, so
  no question is phrased as our guess.
- The condition is kept, once.

Verb agreement comes from `lemminflect` (MIT; its tables ship in the wheel): a note's first
verb is found and put in the second person by the library's lemmas and inflections, whatever
the verb. What stays written here is the person of the pronouns, a closed set that no
maintained library converts; it judges nothing, it only turns "their" to "your".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from factledger.application.recall.notes import unquote
from factledger.application.recall.sources import OpenProposal
from factledger.application.recall.verbs import is_adverb, said_of_you, second_person
from factledger.domain.provenance import Operation
from factledger.domain.values import (
    BooleanValue,
    DateValue,
    FieldValue,
    ListValue,
    MoneyValue,
)

# A word of a field name that the lemmatiser's dictionary does not know, this short, is
# an acronym and is said in capitals ("crm" -> "CRM"); a word with no vowel is one too ("hr").
ACRONYM_MAX = 4
_VOWEL = re.compile(r"[aeiouy]")
# A note's third-person pronouns, as said to the subject.
THIRD_TO_SECOND: Mapping[str, str] = {
    "they": "you",
    "them": "you",
    "their": "your",
    "theirs": "yours",
    "themselves": "yourselves",
}
# A condition's first person (the subject's own words), as said back to the subject.
FIRST_TO_SECOND: Mapping[str, str] = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "we": "you",
    "us": "you",
    "our": "your",
    "ours": "yours",
    "i'm": "you're",
    "we're": "you're",
    "i've": "you've",
    "we've": "you've",
    "i'll": "you'll",
    "we'll": "you'll",
    "myself": "yourself",
    "ourselves": "yourselves",
}
# Of a note's third person, only the possessives are swapped after its first verb: "they"
# there may well be someone else ("uses a tracker they find too slow").
NOTE_POSSESSIVES: Mapping[str, str] = {
    k: v for k, v in THIRD_TO_SECOND.items() if k in ("their", "theirs", "themselves")
}
_WORD = re.compile(r"[A-Za-z']+")


def question_text(proposal: OpenProposal) -> str:
    """What an agent may ask to have a proposal confirmed or declined, in its own words."""
    label = field_label(proposal.field)
    typed = proposal.typed
    if proposal.operation is Operation.FORGET_SAID:  # the lines, never quoted (ADR 0174)
        return "Should we forget what you told us before, as you asked?"
    if proposal.operation is Operation.FORGET and isinstance(typed, ListValue):
        return unquote(f"Should we forget {joined(typed.items)} from your {label}?")
    if proposal.value is None or proposal.operation is Operation.UNSET:
        return unquote(f"Should we remove your {label} from your profile?")
    if proposal.operation is Operation.APPEND and isinstance(typed, ListValue):
        statement = None
        ask = f"Should we add {joined(typed.items)} to your {label}"
    elif proposal.operation is Operation.REMOVE and isinstance(typed, ListValue):
        statement = None
        ask = f"Should we take {joined(typed.items)} off your {label}"
    elif isinstance(typed, BooleanValue):
        statement = boolean_statement(proposal.field, typed.value)
        ask = f"Should we record your {label} as {'yes' if typed.value else 'no'}"
    else:
        statement = value_statement(label, typed, proposal.value)
        ask = ""
    condition = condition_text(proposal.condition, statement or ask)
    if statement is None:
        return unquote(f"{ask}{condition}?")
    return unquote(f"Is it right that {statement}{condition}?")


def field_label(name: str) -> str:
    """`crm_owner` -> `CRM owner`: a short word the lemmatiser's dictionary does not know, or
    one without a vowel, is an acronym."""
    return " ".join(_acronym(w) if _is_acronym(w) else w for w in name.split("_") if w)


def _is_acronym(word: str) -> bool:
    if not word.isalpha():
        return False
    if not _VOWEL.search(word):
        return True
    return len(word) <= ACRONYM_MAX and not _known_word(word)


def _acronym(word: str) -> str:
    return word.upper()


def joined(items: Sequence[str]) -> str:
    """`A`, `A and B`, `A, B and C`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def boolean_statement(field: str, flag: bool) -> str | None:
    """`has_budget_approval`, True -> `you have budget approval`; None unless the field's
    first word is a third-person verb."""
    prefix, _, rest = field.partition("_")
    said = said_of_you(prefix, true=flag) if rest else None
    return None if said is None else f"you {said} {field_label(rest)}"


def value_statement(label: str, typed: FieldValue | None, rendered: str) -> str:
    match typed:
        case MoneyValue(amount, currency):
            return f"your {label} is {amount_text(amount)} {currency}"
        case DateValue(day):
            return f"your {label} is {day.day} {day:%B %Y}"
        case ListValue(items):
            return f"your {label} are {joined(items)}"
    note = second_person_note(rendered)
    return note if note is not None else f"your {label} is {rendered}"


def amount_text(amount: Decimal) -> str:
    """`25000` -> `25,000`; `1250.5` -> `1,250.50`."""
    if amount == amount.to_integral_value():
        return f"{int(amount):,}"
    return f"{amount:,.2f}"


def second_person_note(note: str) -> str | None:
    """A model's third-person note that starts with a verb, said to the subject; else None.

    `no longer works with Northwind` -> `you no longer work with Northwind`.
    """
    words = note.split(" ")
    start = 0
    while start < len(words) and is_adverb(words[start]):
        start += 1
    if start == len(words):
        return None
    verb = second_person(words[start])
    if verb is None:
        return None
    rest = [_swap(w, NOTE_POSSESSIVES) for w in words[start + 1 :]]
    return " ".join(["you", *words[:start], verb, *rest])


def condition_text(condition: str | None, said: str) -> str:
    """`If we close the round.` -> `, if you close the round`; empty when already said."""
    if not condition:
        return ""
    text = condition.strip().rstrip(".!?;,").strip()
    if not text or text.lower() in said.lower():
        return ""
    words = [_swap(w, FIRST_TO_SECOND) for w in text.split(" ")]
    # A condition opens a clause ("If we close the round"): its first word is lower-cased
    # unless it is a name the dictionary does not know or an acronym ("SSO").
    first = words[0]
    if first[:1].isupper() and first[1:].islower() and _known_word(first.lower()):
        words[0] = first.lower()
    return ", " + " ".join(words)


def _swap(word: str, table: Mapping[str, str]) -> str:
    """Replaces the word's letters by the table's entry, keeping punctuation around it."""
    match = _WORD.search(word)
    if match is None:
        return word
    replacement = table.get(match.group().lower())
    if replacement is None:
        return word
    return word[: match.start()] + replacement + word[match.end() :]


def _known_word(word: str) -> bool:
    """Whether the lemmatiser's English dictionary holds `word`. `simplemma` is imported at
    the first question phrased, not with this module (its import compiles every language's
    rules: see `application/memory/inflection.py`)."""
    import simplemma

    known: bool = simplemma.is_known(word, lang="en")
    return known
