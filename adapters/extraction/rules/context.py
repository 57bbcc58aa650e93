"""What a slot fact keeps of the words said with it in the same clause.

"We work with Bramble Boxes for our packaging" is one fact: who the supplier is *and* what for.
The slot pattern matches "we work with Bramble Boxes"; the phrase after it ("for our
packaging") has no verb of its own, so as a separate note it would be a fragment ("for their
packaging") that outranks the supplier for "Who makes their packaging?" while naming nobody.
Such a phrase stays with the fact it belongs to: "works with Bramble Boxes for their
packaging". A phrase that carries its own statement ("and we love them") is left to the
clause's other notes, as before.
"""

from __future__ import annotations

import re
from dataclasses import replace

from factledger.adapters.extraction.rules.notes import is_fragment
from factledger.adapters.extraction.rules.statements import SlotMatch, plain_note

# A phrase that modifies what precedes it opens with a preposition.
_PREPOSITION = re.compile(
    r"^(?:for|with|on|in|at|from|across|around|through|throughout|via|inside|within)\s+\S",
    re.IGNORECASE,
)
# Only a phrase about something of the subject's ("for our boxes", "with my partner") was ever
# kept, as a fragment of its own; one without ("for the new role") was dropped, and stays so.
_FIRST_PERSON = re.compile(r"\b(?:my|our|me|us)\b", re.IGNORECASE)
# The phrase ends where the clause moves on: punctuation or a coordinating conjunction.
_CLAUSE_END = re.compile(r"[,;:.!?()]|\s(?:and|but|so|or|while|whereas|which|who|that)\b", re.I)
MAX_CONTEXT_WORDS = 6  # longer tails are more than a modifier; they stay out of the note


def with_context(text: str, matches: list[SlotMatch]) -> list[tuple[SlotMatch, str]]:
    """Each match widened over the verbless prepositional phrase right after it, and that
    phrase as the note should say it ("for their boxes"; "" when there is none)."""
    widened = []
    for position, match in enumerate(matches):
        limit = matches[position + 1].start if position + 1 < len(matches) else len(text)
        gap = text[match.end : limit]
        phrase = _phrase(gap)
        if not phrase:
            widened.append((match, ""))
            continue
        end = match.end + gap.index(phrase) + len(phrase)
        widened.append((replace(match, end=end), plain_note(phrase)))
    return widened


def _phrase(gap: str) -> str:
    stripped = gap.lstrip()
    cut = _CLAUSE_END.search(stripped)
    phrase = (stripped[: cut.start()] if cut else stripped).strip()
    if not _PREPOSITION.match(phrase) or not _FIRST_PERSON.search(phrase):
        return ""
    if not is_fragment(phrase):
        return ""
    if len(phrase.split()) > MAX_CONTEXT_WORDS:
        return ""
    return phrase
