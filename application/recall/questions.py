"""Questions an agent may ask to have a pending proposal confirmed or declined.

- A paraphrase in the second person, never the subject's quotation: a note the model wrote
  about the subject ("no longer works with Northwind") is turned to "you no longer work with
  Northwind"; a condition kept in the subject's words ("if we close the round") to "if you
  close the round".
- Phrased per operation and value type: an unset asks to remove, an append to add, a boolean
  field (`has_`, `is_`, `uses_`...) says what is true of "you", money and dates read as written.
- Only what the subject said is put to them (`askable`): an inference goes to reviewers, so
  no question is phrased as our guess.
- The condition is kept, once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from factledger.application.recall.notes import unquote
from factledger.application.recall.sources import OpenProposal
from factledger.domain.provenance import Operation
from factledger.domain.values import (
    BooleanValue,
    DateValue,
    FieldValue,
    ListValue,
    MoneyValue,
)

ACRONYMS = frozenset(
    {"crm", "erp", "sso", "vat", "sla", "api", "ceo", "cfo", "cto", "hr", "saas", "id", "kpi"}
)
# Boolean field prefixes: (said when true, said when false).
BOOLEAN_PREFIXES: Mapping[str, tuple[str, str]] = {
    "is": ("are", "are not"),
    "has": ("have", "do not have"),
    "uses": ("use", "do not use"),
    "wants": ("want", "do not want"),
    "needs": ("need", "do not need"),
    "can": ("can", "cannot"),
}
# A note's third person, word by word, as said to the subject.
THIRD_TO_SECOND: Mapping[str, str] = {
    "is": "are",
    "isn't": "aren't",
    "was": "were",
    "wasn't": "weren't",
    "has": "have",
    "hasn't": "haven't",
    "does": "do",
    "doesn't": "don't",
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
# Verbs a model's note may start with (third person); a note starting otherwise is a value.
NOTE_VERBS = frozenset(
    {
        "agrees",
        "believes",
        "budgets",
        "buys",
        "compares",
        "considers",
        "deals",
        "depends",
        "dislikes",
        "employs",
        "evaluates",
        "expects",
        "feels",
        "finds",
        "gets",
        "goes",
        "handles",
        "hires",
        "holds",
        "hopes",
        "intends",
        "keeps",
        "leads",
        "likes",
        "lives",
        "looks",
        "makes",
        "manages",
        "needs",
        "operates",
        "owns",
        "pays",
        "plans",
        "prefers",
        "relies",
        "reports",
        "runs",
        "sees",
        "sells",
        "sends",
        "shares",
        "spends",
        "switches",
        "takes",
        "thinks",
        "tracks",
        "travels",
        "uses",
        "wants",
        "watches",
        "wishes",
        "works",
    }
)
# Of a note's third person, only these are swapped after its first verb: "is" there may
# well be about something else ("uses a tracker that is too slow").
NOTE_POSSESSIVES: Mapping[str, str] = {
    "their": "your",
    "theirs": "yours",
    "themselves": "yourselves",
}
# A condition's first word is lowercased only when it is one of these.
CONNECTORS = frozenset(
    {"if", "unless", "until", "depending", "when", "once", "provided", "as", "after", "before"}
)
MODALS = frozenset({"may", "might", "will", "would", "could", "can", "should", "must"})
ADVERBS = frozenset({"no", "longer", "not", "still", "already", "currently", "also", "never"})
_WORD = re.compile(r"[A-Za-z']+")
_SIBILANT = re.compile(r"(ss|sh|ch|x|z|o)es$")


def question_text(proposal: OpenProposal) -> str:
    """What an agent may ask to have a proposal confirmed or declined, in its own words."""
    label = field_label(proposal.field)
    if proposal.value is None or proposal.operation is Operation.UNSET:
        return unquote(f"Should we remove your {label} from your profile?")
    typed = proposal.typed
    if proposal.operation is Operation.APPEND and isinstance(typed, ListValue):
        statement = None
        ask = f"Should we add {joined(typed.items)} to your {label}"
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
    """`crm_owner` -> `CRM owner`."""
    return " ".join(w.upper() if w in ACRONYMS else w for w in name.split("_") if w)


def joined(items: Sequence[str]) -> str:
    """`A`, `A and B`, `A, B and C`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def boolean_statement(field: str, flag: bool) -> str | None:
    """`has_budget_approval`, True -> `you have budget approval`; None for other fields."""
    prefix, _, rest = field.partition("_")
    if prefix not in BOOLEAN_PREFIXES or not rest:
        return None
    said_true, said_false = BOOLEAN_PREFIXES[prefix]
    return f"you {said_true if flag else said_false} {field_label(rest)}"


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
    while start < len(words) and words[start] in ADVERBS:
        start += 1
    if start == len(words):
        return None
    first = words[start]
    if first in MODALS or first in THIRD_TO_SECOND:
        verb = THIRD_TO_SECOND.get(first, first)
    elif first in NOTE_VERBS:
        verb = base_form(first)
    else:
        return None
    rest = [_swap(w, NOTE_POSSESSIVES) for w in words[start + 1 :]]
    return " ".join(["you", *words[:start], verb, *rest])


def base_form(word: str) -> str:
    """`works` -> `work`, `manages` -> `manage`, `watches` -> `watch`, `relies` -> `rely`."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if _SIBILANT.search(word):
        return word[:-2]
    return word[:-1]


def condition_text(condition: str | None, said: str) -> str:
    """`If we close the round.` -> `, if you close the round`; empty when already said."""
    if not condition:
        return ""
    text = condition.strip().rstrip(".!?;,").strip()
    if not text or text.lower() in said.lower():
        return ""
    words = [_swap(w, FIRST_TO_SECOND) for w in text.split(" ")]
    if words[0].lower() in CONNECTORS:
        words[0] = words[0].lower()
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
