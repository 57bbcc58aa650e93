"""Proposed profile values that do or do not disclose a secret, screened as the fields a caller
writes are screened (`application/sessions/field_screening.py`).

A set is a directory of `lines-*.yaml` files, each a list of `{id, lang, field, text, secret,
kind}`: a proposal's field name (snake_case), its value as it would be stored, the value's
language, whether the value discloses a usable secret, and what it is. Writers who never saw
the product write them; sets are split into halves by the SHA-256 of each id.

    python -m factledger.bench.evalsets.secret_values score DIR [DIR...] [--detail FILE]
    python -m factledger.bench.evalsets.secret_values split WRITER_DIR --into SET_DIR
    python -m factledger.bench.evalsets.secret_values collateral CONVERSATION_DIR [...]

Three screens, side by side: `fields`, what screens a proposal's value now (the detectors and
the instruction head: `screened_safety`); `fields+head`, that and the secret head reading the
bare value; `fields+head(field: value)`, that and the secret head reading the value after its
field's name ("access notes: 4471"). Only counts are printed; `--detail` (dev halves only)
writes the values each screen got wrong. `collateral` screens the values the blind
conversation sets expect proposed (`expect.proposals`: ordinary profile values, none a secret)
with the same three screens and counts what each refuses: values a screen would lose.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from factledger.application.sessions.ports import SafetyFilter, SecretDetector
from factledger.application.sessions.secret_screen import SECRET_MIN
from factledger.application.sessions.types import SafetyVerdict
from factledger.bench.evalsets import line_files
from factledger.bench.evalsets.secret_lines import SecretLine, score
from factledger.domain.transcript import Message


@dataclass(frozen=True, slots=True)
class SecretValue:
    id: str
    lang: str
    field: str
    text: str
    secret: bool
    kind: str

    def as_read(self, with_field: bool) -> SecretLine:
        """The value as a screen reads it: alone, or after its field's name in words."""
        text = f"{self.field.replace('_', ' ')}: {self.text}" if with_field else self.text
        return SecretLine(self.id, self.lang, text, self.secret, self.kind)


class SecretValueError(ValueError):
    """A value file breaks the format (the message names the file and the item)."""


def _value(raw: object, where: str) -> SecretValue:
    if not isinstance(raw, dict):
        raise SecretValueError(f"{where}: an item must be a mapping")
    item_id, field, text, secret = (
        str(raw.get("id") or ""),
        raw.get("field"),
        raw.get("text"),
        raw.get("secret"),
    )
    if not item_id or not isinstance(text, str) or not text.strip():
        raise SecretValueError(f"{where}: every item needs an id and a text")
    if not isinstance(field, str) or not field.strip():
        raise SecretValueError(f"{where} {item_id}: every item needs its field")
    if not isinstance(secret, bool):
        raise SecretValueError(f"{where} {item_id}: secret must be true or false")
    lang, kind = str(raw.get("lang") or ""), str(raw.get("kind") or "")
    return SecretValue(item_id, lang, field.strip(), text, secret, kind)


def load_values(paths: Sequence[Path]) -> list[SecretValue]:
    return line_files.load_items(paths, _value, SecretValueError)


def expected_values(directories: Sequence[Path]) -> list[SecretValue]:
    """The values the conversation sets under `directories` expect proposed, as plain values
    (`secret: false`), each (field, value) once."""
    seen: dict[tuple[str, str], None] = {}
    for directory in directories:
        for path in sorted(directory.glob("cases-*.yaml")):
            for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
                for session in case["sessions"]:
                    for wanted in (session.get("expect") or {}).get("proposals") or []:
                        value = wanted.get("value")
                        if isinstance(value, str | int | float) and str(value).strip():
                            seen[(str(wanted["field"]), str(value))] = None
    return [
        SecretValue(f"c{n}", "", field, value, False, "expected proposal")
        for n, (field, value) in enumerate(seen)
    ]


@dataclass(frozen=True, slots=True)
class FieldsThenHead:
    """As proposals' values would be screened with a secret head: the fields' screen reads the
    bare value, then the head reads it after its field's name. It is given the value as
    `SecretValue.as_read(with_field=True)` writes it ("field name: value"; a field's name in
    words holds no ": ")."""

    fields: SafetyFilter
    head: SecretDetector

    async def screen(self, message: Message) -> SafetyVerdict:
        bare = message.text.split(": ", 1)[1]
        verdict = await self.fields.screen(Message(message.role, bare))
        if not verdict.allowed:
            return verdict
        (p,) = await self.head.secret_p([message.text])
        return SafetyVerdict(allowed=False, category="credential") if p >= SECRET_MIN else verdict


def screens(value_head: Path | None = None) -> dict[str, tuple[SafetyFilter, bool]]:
    """Each screen by name, with whether it is given the field's name before the value (then
    the fields' screen still reads the bare value: `FieldsThenHead`); with `value_head`, also
    that head file (ADR 0188) reading "field name: value"."""
    from factledger.adapters.judgement.secrets import LearnedSecretDetector
    from factledger.adapters.safety.detectors import DetectorSafetyFilter
    from factledger.api.bootstrap.judgement import answer_judge, screened_safety
    from factledger.api.settings import ExtractionSettings, LearnedExtractorSettings
    from factledger.application.sessions.secret_screen import SecretScreen

    fields = screened_safety(
        DetectorSafetyFilter(), answer_judge(LearnedExtractorSettings(), ExtractionSettings())
    )
    message_head = LearnedSecretDetector.packaged()
    named: dict[str, tuple[SafetyFilter, bool]] = {
        "fields": (fields, False),
        "fields+head": (SecretScreen(fields, message_head), False),
        "fields+head(field: value)": (FieldsThenHead(fields, message_head), True),
    }
    if value_head is not None:
        values = LearnedSecretDetector.shipped(value_head, None, None)
        named["fields+value head(field: value)"] = (FieldsThenHead(fields, values), True)
    return named


async def score_all(
    values: Sequence[SecretValue],
    named: dict[str, tuple[SafetyFilter, bool]],
    detail: list[dict[str, Any]] | None = None,
) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for name, (screen, with_field) in named.items():
        wrong: list[dict[str, Any]] | None = [] if detail is not None else None
        tally = await score([v.as_read(with_field) for v in values], screen, wrong)
        out[name] = tally.figures()
        if detail is not None and wrong is not None:
            detail += [{"screen": name, **w} for w in wrong]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.secret_values")
    commands = parser.add_subparsers(dest="command", required=True)
    scoring = commands.add_parser("score", help="score set halves with the three screens")
    scoring.add_argument("dirs", type=Path, nargs="+")
    scoring.add_argument("--detail", type=Path, help="the values screened wrong (dev only)")
    splitting = commands.add_parser("split", help="split a writer's files into dev and held out")
    splitting.add_argument("source", type=Path)
    splitting.add_argument("--into", type=Path, required=True)
    collateral = commands.add_parser(
        "collateral", help="what each screen refuses of the conversation sets' expected values"
    )
    collateral.add_argument("dirs", type=Path, nargs="+")
    for command in (scoring, collateral):
        command.add_argument("--value-head", type=Path, help="a candidate value head (ADR 0188)")
    args = parser.parse_args(argv)
    if args.command == "collateral":
        figures = asyncio.run(score_all(expected_values(args.dirs), screens(args.value_head)))
        refused = {n: {k: f[k] for k in ("plain", "false_alarms")} for n, f in figures.items()}
        sys.stdout.write(json.dumps(refused, indent=1) + "\n")
        return
    if args.command == "split":
        sys.stdout.write(json.dumps(line_files.split(args.source, args.into, load_values)) + "\n")
        return
    detail = line_files.detail_for(args.dirs, args.detail, "values")
    named = screens(args.value_head)
    report = []
    for directory in args.dirs:
        figures = asyncio.run(score_all(load_values([directory]), named, detail))
        report.append({"set": str(directory), **figures})
    line_files.write_detail(args.detail, detail)
    sys.stdout.write(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
