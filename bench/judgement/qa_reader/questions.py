"""The question a field is asked as: its name as words, and, in training only, sometimes its
one-line meaning (a deployment's bare-typed field has only a name, so the reader must read a
bare name; the meaning on some pairs ties names to what they mean)."""

from __future__ import annotations

from factledger.adapters.judgement.qa_reader.inputs import field_words
from factledger.bench.judgement.conversations import LIST_MARK


def question_for(field: str, meaning: str | None = None) -> str:
    asked = f"what is the person's {field_words(field)}?"
    if not meaning:
        return asked
    told = meaning.strip()
    if told.lower().startswith(LIST_MARK):
        told = told[len(LIST_MARK) :].strip()
    return f"{asked} ({told})"
