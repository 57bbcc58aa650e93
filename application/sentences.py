"""The sentences of a line: one cut for every reader that works sentence by sentence (ADR 0176).

A sentence ends where pysbd's English rules end one (they know titles, initials and line
breaks: "Dr. Osei", "W. Nowak", a form's "Name: ...\\nDate of birth: ..."), and also where
`.`, `!` or `?` and a space end one before a word that does not start with a capital: pysbd,
written for edited prose, joins a chat's "ok. my daughter will bring me", and its join is
kept only before a capitalised word, which is where it read an abbreviation. No list of
abbreviations is kept here; pysbd's are. pysbd is imported at the first cut, not with this
module, so a start to ready does not wait for it (a served process imports it once ready,
`api/bootstrap/deferred_imports.py`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING

import structlog
from cachetools import LRUCache

if TYPE_CHECKING:
    import pysbd

log = structlog.get_logger(__name__)

# A full stop, question or exclamation mark and the space after it; the next character decides.
_PUNCTUATION_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_PARAGRAPH = re.compile(r"[^\n]+")
# A session's readers cut the same lines several times over: the cuts of the latest lines,
# keyed by a digest of the line, so the cache never holds a text (a forgotten line's words
# stay nowhere); offsets only.
CACHED_LINES = 512
_cuts: LRUCache[bytes, tuple[tuple[int, int], ...]] = LRUCache(CACHED_LINES)
_cutting = threading.Lock()

# A segmenter keeps the text it cuts on itself between its steps, and the judges cut lines in
# worker threads: one cut at a time (pure Python, so the lock costs no parallelism).
_segmenting = threading.Lock()


@cache
def _segmenter() -> pysbd.Segmenter:
    """The one segmenter, made at the first cut (call with `_segmenting` held)."""
    import pysbd  # deferred: see the module's docstring

    return pysbd.Segmenter(language="en", clean=False, char_span=True)


def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Each sentence of `text` as (start, end) offsets, without its surrounding space."""
    key = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
    with _cutting:
        known = _cuts.get(key)
    if known is None:
        known = _cut(text)
        with _cutting:
            _cuts[key] = known
    return known


def forget_cuts() -> None:
    """Empties the cache of cuts (tests that time or race the cut itself)."""
    with _cutting:
        _cuts.clear()


def _cut(text: str) -> tuple[tuple[int, int], ...]:
    starts = {0}
    # A line break ends a sentence, so each paragraph is cut alone: pysbd's cost grows faster
    # than its text's length (a 10,000-character message, the most one may hold, costs it
    # about a third of a second whole, far less paragraph by paragraph).
    for paragraph in _PARAGRAPH.finditer(text):
        starts.add(paragraph.start())
        try:
            with _segmenting:
                cut = _segmenter().segment(paragraph.group())
        except Exception as exc:  # a library's fault on one paragraph: the punctuation's cut
            log.warning("sentences.segmenter_failed", error_type=type(exc).__name__)
            cut = ()
            starts.update(
                paragraph.start() + m.end() for m in _PUNCTUATION_END.finditer(paragraph.group())
            )
        starts.update(paragraph.start() + span.start for span in cut)
    starts.update(m.end() for m in _PUNCTUATION_END.finditer(text) if not text[m.end()].isupper())
    bounds = [*sorted(starts), len(text)]
    spans = []
    for start, end in pairwise(bounds):
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
    return tuple(spans)


def sentences(text: str) -> list[str]:
    """The sentences of `text`, exactly as written."""
    return [text[start:end] for start, end in sentence_spans(text)]


def sentences_holding(text: str, needle: str) -> str | None:
    """The sentence of `text` holding `needle` (case folded), exactly as written; where no
    one sentence holds it (words read across a cut), the shortest run of consecutive
    sentences around its first occurrence; None where `text` does not hold it."""
    if not needle.strip():
        return None
    spans = sentence_spans(text)
    folded = needle.casefold()
    for start, end in spans:
        if folded in text[start:end].casefold():
            return text[start:end]
    return sentences_covering(text, (needle,))


def sentences_covering(text: str, needles: Sequence[str]) -> str | None:
    """The shortest run of consecutive sentences of `text` that holds the first occurrence
    (case folded) of every one of `needles` that `text` holds, exactly as written; None where
    it holds none of them."""
    found = [
        m
        for needle in needles
        if needle.strip() and (m := re.search(re.escape(needle), text, re.IGNORECASE))
    ]
    if not found:
        return None
    start, end = min(m.start() for m in found), max(m.end() for m in found)
    touched = [(s, e) for s, e in sentence_spans(text) if s < end and start < e]
    return text[touched[0][0] : touched[-1][1]] if touched else text[start:end]
