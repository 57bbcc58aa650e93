"""The typed-value reader scored on written items: words, a field's type, the day they were said
and the right answer (a value, or none).

`python -m factledger.bench.evalsets.typed_items <dirs> [--detail FILE]` reads every
`items-*.yaml` (a list of `{id, language, type, field, said_on, currency, words, expected}`;
`expected` is an ISO date, a number, "<amount> <CODE>", or null) and sorts each item:

- a value was expected: `right`, `wrong` (read as another value: the costly error, a false
  typed value in a profile) or `missed` (read as none);
- none was expected: `kept_none` or `false_value` (a value read where the words say none).

Precision is `right / (right + wrong + false_value)`, recall `right / values expected`. The
held-out halves are reported by their counts only (`--detail` refuses them).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from factledger.adapters.values.words import WordsValueReader
from factledger.application.proposals.typed import ReadingHints
from factledger.domain.values import (
    DateValue,
    FieldValue,
    MoneyValue,
    NumberValue,
    ValueType,
    render,
)

OUTCOMES = ("right", "wrong", "missed", "kept_none", "false_value")


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    language: str
    type: ValueType
    field: str
    said_on: date
    currency: str | None
    words: str
    expected: FieldValue | None


@dataclass(frozen=True, slots=True)
class Scored:
    id: str
    language: str
    type: str
    words: str
    expected: str | None
    read: str | None
    outcome: str


def expected_value(kind: ValueType, raw: object) -> FieldValue | None:
    """The item's answer as a value; None for null. Raises `ValueError` for a malformed one."""
    if raw is None:
        return None
    text = str(raw).strip()
    try:
        match kind:
            case ValueType.DATE:
                return DateValue(date.fromisoformat(text))
            case ValueType.NUMBER:
                return NumberValue(Decimal(text))
            case ValueType.MONEY:
                amount, code = text.split()
                return MoneyValue(Decimal(amount), code)
    except (ValueError, InvalidOperation) as exc:
        raise ValueError(f"expected: {text!r} is no {kind} answer") from exc
    raise ValueError(f"type: {kind} is not read from words")


def parse_items(raw: list[dict[str, Any]]) -> list[Item]:
    items = []
    for entry in raw:
        kind = ValueType(str(entry["type"]))
        said_on = entry["said_on"]
        items.append(
            Item(
                id=str(entry["id"]),
                language=str(entry.get("language", "")),
                type=kind,
                field=str(entry.get("field", "")),
                said_on=said_on if isinstance(said_on, date) else date.fromisoformat(said_on),
                currency=None if entry.get("currency") is None else str(entry["currency"]),
                words=str(entry["words"]),
                expected=expected_value(kind, entry.get("expected")),
            )
        )
    return items


def load_items(directory: Path) -> list[Item]:
    found: list[Item] = []
    for path in sorted(directory.glob("items-*.yaml")):
        found += parse_items(yaml.safe_load(path.read_text(encoding="utf-8")) or [])
    return found


def _same(read: FieldValue, expected: FieldValue) -> bool:
    if isinstance(read, MoneyValue) and isinstance(expected, MoneyValue):
        return read.currency == expected.currency and read.amount == expected.amount
    if isinstance(read, NumberValue) and isinstance(expected, NumberValue):
        return read.value == expected.value
    return read == expected


def score_item(item: Item, reader: WordsValueReader) -> Scored:
    hints = ReadingHints(currency=item.currency)
    read = reader.read(item.type, item.words, said_on=item.said_on, hints=hints)
    if item.expected is None:
        outcome = "kept_none" if read is None else "false_value"
    elif read is None:
        outcome = "missed"
    else:
        outcome = "right" if _same(read, item.expected) else "wrong"
    return Scored(
        item.id,
        item.language,
        item.type.value,
        item.words,
        None if item.expected is None else render(item.expected),
        None if read is None else render(read),
        outcome,
    )


def tally(scored: list[Scored]) -> dict[str, Any]:
    counts = Counter(s.outcome for s in scored)
    values = counts["right"] + counts["wrong"] + counts["missed"]
    claimed = counts["right"] + counts["wrong"] + counts["false_value"]
    return {
        "items": len(scored),
        **{o: counts[o] for o in OUTCOMES},
        "precision": round(counts["right"] / claimed, 4) if claimed else None,
        "recall": round(counts["right"] / values, 4) if values else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.typed_items")
    parser.add_argument("sets", nargs="+", type=Path, help="directories of items-*.yaml")
    parser.add_argument("--detail", type=Path, help="also write each item here (dev only)")
    args = parser.parse_args(argv)
    if args.detail is not None and any("heldout" in d.parts for d in args.sets):
        raise SystemExit("--detail lists the items: dev halves only")
    reader = WordsValueReader()
    results, detail = [], []
    for directory in args.sets:
        scored = [score_item(item, reader) for item in load_items(directory)]
        by_type = {
            t: tally([s for s in scored if s.type == t]) for t in ("date", "number", "money")
        }
        languages = sorted({s.language for s in scored})
        by_language = {lang: tally([s for s in scored if s.language == lang]) for lang in languages}
        results.append(
            {
                "set": str(directory),
                "all": tally(scored),
                "by_type": by_type,
                "by_language": by_language,
            }
        )
        detail += [{"set": str(directory), **asdict(s)} for s in scored]
    sys.stdout.write(json.dumps(results, indent=2) + "\n")
    if args.detail is not None:
        args.detail.write_text(
            json.dumps(detail, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
