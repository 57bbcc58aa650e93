"""The words a fact that replaces another in its slot takes from it: what the slot is for.

"We work with Kestrel for our boxes", then in a later session "We now work with Vireo Wraps":
the current fact says only its new value, and what the slot is for ("boxes") was said with the
old one, so "who do they get their boxes from?" lifted only the replaced fact, which recall
does not show. So at ingest a fact that supersedes the current fact of its slot is
also keyed by the words that fact hands on:

- a fact hands on the words of its note ("works with Kestrel for their boxes": the extractor
  keeps what the value is for with it) and the words it inherited, less the words of
  its value and of every value before it in the slot that it still held ("we left Kestrel" in
  its own sentence): a successor never holds a word of a replaced value through this rule, so
  forgetting the replaced fact leaves nothing of its value searchable. Not its
  source sentences nor the question they answered: "And on the business side?" before the
  supplier's sentence made "business" lift the supplier for employer questions;
- a fact whose value the extractor did not isolate cannot tell its value's words from the
  rest, so it hands on only what it inherited, less its own words;
- a successor inherits what its predecessor hands on, less the words it holds itself, so a
  third value inherits through the second (the chain).

The rule reads only what the replaced fact stored when it was ingested (`SlotKeywords`), so
it gives the same terms whichever order, batch or sync run brought the two facts, as long as
the backend records the same supersession; a replayed fact keeps the terms it was written
with (its deterministic id is skipped).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from factledger.application.memory.lexical import keywords


@dataclass(frozen=True, slots=True)
class SlotKeywords:
    """What a stored fact of a slot keeps for the fact that replaces it."""

    terms: Collection[str]  # its keywords as searched
    handed_on: Collection[str]  # the words a successor in its slot inherits


@dataclass(frozen=True, slots=True)
class Succession:
    """A new fact's keywords after the rule, and what it will hand on in turn."""

    terms: Counter[str]
    handed_on: frozenset[str]


def succeed(
    own: Counter[str], text: str, value: str | None, replaced: SlotKeywords | None
) -> Succession:
    """`own`: the new fact's keywords (`lexical.extraction_terms`); `text`: the fact as noted;
    `value`: its slot's value as said (`ExtractedFact.value`); `replaced`: what the fact it
    supersedes in its slot stored, or None when it supersedes nothing."""
    handed = set(replaced.handed_on) if replaced is not None else set()
    inherited = sorted(t for t in handed if t not in own)
    terms = Counter(own)
    terms.update(inherited)
    if value is None:
        return Succession(terms, frozenset(inherited))
    # The replaced fact's own words it did not hand on are its value's (and older values'):
    # the new sentence may repeat them ("we left Kestrel for Vireo"), and they stop here.
    withheld = set(replaced.terms) - handed if replaced is not None else set()
    noted = set(keywords(text)) | handed
    return Succession(terms, frozenset(noted - withheld - set(keywords(value))))
