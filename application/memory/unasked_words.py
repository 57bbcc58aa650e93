"""The words that name nothing a fact holds, fitted from labelled conversations (ADR 0118).

A word that questions and stated sentences use whatever field they are about, that a value
or a field's name almost never holds, and that the lemmatiser's lexicon can read as an adverb
("now", "currently", "still", "already"), tells no fact apart: in a query it only dilutes
the words that name the answer, and in a source sentence ("I work at X now") it only marks a
change. Memories' keywords and queries' both leave them out (`lexical.keywords`). The words
are counted, not listed: the lab fits them on the labelled training conversations and writes
them to `data/unasked_words.json`, pinned here by its SHA-256; a deployment refits them on
its own labelled conversations with

    python -m factledger.bench.field_slots fit-unasked --write

(which prints the new file's SHA-256 to pin here), then ingests its sessions again, since
stored memories keep the keywords they were indexed under.
"""

from __future__ import annotations

import hashlib
import json
from importlib.resources import files

FILE = "unasked_words.json"
SHA256 = "0ad70b4e7f095973ebab5bd4b4398cc75a4d01b342d49589fe6508c0efedfb11"


class UnaskedWordsFileError(RuntimeError):
    """The packaged words file is not the pinned one, or not a words file."""


def parse_unasked_words(data: bytes, sha256: str) -> frozenset[str]:
    """The words of a file's bytes (`{"words": {word: counts}}`), checked against `sha256`."""
    if hashlib.sha256(data).hexdigest() != sha256:
        raise UnaskedWordsFileError(f"{FILE}: SHA-256 differs from the pinned one")
    try:
        words = json.loads(data)["words"]
    except (ValueError, KeyError, TypeError) as exc:
        raise UnaskedWordsFileError(f"{FILE}: no words ({type(exc).__name__})") from exc
    if not isinstance(words, dict) or not all(isinstance(w, str) for w in words):
        raise UnaskedWordsFileError(f"{FILE}: words must be an object keyed by word")
    return frozenset(words)


def packaged_unasked_words() -> frozenset[str]:
    """The shipped words, read from the package (as the stopword library reads its list)."""
    data = files(__package__ or __name__.rpartition(".")[0]).joinpath("data", FILE).read_bytes()
    return parse_unasked_words(data, SHA256)
