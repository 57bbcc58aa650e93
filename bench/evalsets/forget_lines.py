"""Customer messages that do or do not ask to forget something, scored as the product reads
them (ADR 0165).

A set is a directory of `lines-*.yaml` files, each a list of
`{id, language, domain, text, request, request_sentence, why_not}`: one message a subject says,
whether it asks the service to forget something about them, the sentence that asks (exactly
as in `text`), and for a near miss what kind it is. Writers who never saw the product write
them; evaluation sets are split into halves by the SHA-256 of each id (`split`), training
lines teach the forget flag (`bench.judgement.forget_flag`).

    python -m factledger.bench.evalsets.forget_lines score DIR [DIR...] \
        [--heads FILE --heads-sha256 HEX] [--forget-reader FILE] [--detail FILE]
    python -m factledger.bench.evalsets.forget_lines split WRITER_DIR --into SET_DIR

Each message is played as a one-line transcript through `said_requests` with the learned
judge: a request line is `noticed` when any of its sentences is flagged, and its request
sentence `found` when the flagged sentences include one that overlaps it; a near miss flagged
anywhere is a `false_alarm`. Held-out halves are scored by their counts only (`--detail`
refuses them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factledger.application.judgement.ports import SentenceJudge
from factledger.application.review.forget_requests import said_requests
from factledger.application.sentences import sentences
from factledger.bench.evalsets import line_files
from factledger.bench.evalsets.judging import judge_for
from factledger.bench.evalsets.line_files import ratio
from factledger.domain.transcript import Message, Role

ENGLISH = "en"


@dataclass(frozen=True, slots=True)
class ForgetLine:
    id: str
    language: str
    domain: str
    text: str
    request: bool
    request_sentence: str
    why_not: str

    def request_span(self) -> tuple[int, int] | None:
        """Where the request sentence stands in the text (None for a near miss)."""
        if not self.request:
            return None
        start = self.text.find(self.request_sentence)
        return start, start + len(self.request_sentence)


class ForgetLineError(ValueError):
    """A line file breaks the format (the message names the file and the item)."""


def _line(raw: object, where: str) -> ForgetLine:
    if not isinstance(raw, dict):
        raise ForgetLineError(f"{where}: an item must be a mapping")
    item_id = str(raw.get("id") or "")
    text = raw.get("text")
    request = raw.get("request")
    sentence = str(raw.get("request_sentence") or "")
    if not item_id or not isinstance(text, str) or not text.strip():
        raise ForgetLineError(f"{where}: every item needs an id and a text")
    if not isinstance(request, bool):
        raise ForgetLineError(f"{where} {item_id}: request must be true or false")
    if request and (not sentence.strip() or sentence not in text):
        raise ForgetLineError(
            f"{where} {item_id}: request_sentence must be the words of text that ask"
        )
    return ForgetLine(
        item_id,
        str(raw.get("language") or ""),
        str(raw.get("domain") or ""),
        text,
        request,
        sentence if request else "",
        str(raw.get("why_not") or ""),
    )


def load_lines(paths: Sequence[Path]) -> list[ForgetLine]:
    """Every item of the `lines-*.yaml` files under `paths` (directories or files), ids unique."""
    return line_files.load_items(paths, _line, ForgetLineError)


def request_pieces(line: ForgetLine) -> list[tuple[str, bool]]:
    """The line's sentences as the product cuts them, each marked when it overlaps the
    request sentence (the one that asks; a near miss has none)."""
    span = line.request_span()
    pieces, at = [], 0
    for piece in sentences(line.text):
        start = line.text.find(piece, at)
        end = start + len(piece)
        at = end
        pieces.append((piece, span is not None and start < span[1] and span[0] < end))
    return pieces


@dataclass(slots=True)
class Tally:
    requests: int = 0
    noticed: int = 0
    found: int = 0  # the request sentence itself among the flagged ones
    near_misses: int = 0
    false_alarms: int = 0
    requests_english: int = 0
    noticed_english: int = 0
    near_misses_english: int = 0
    false_alarms_english: int = 0

    def figures(self) -> dict[str, object]:
        return {
            **asdict(self),
            "noticed_rate": ratio(self.noticed, self.requests),
            "false_alarm_rate": ratio(self.false_alarms, self.near_misses),
            "noticed_rate_english": ratio(self.noticed_english, self.requests_english),
            "noticed_rate_other": ratio(
                self.noticed - self.noticed_english, self.requests - self.requests_english
            ),
        }


async def flagged_pieces(line: ForgetLine, judge: SentenceJudge) -> list[str]:
    """The sentences of `line` the product reads as requests to forget."""
    said = await said_requests((Message(Role.SUBJECT, line.text),), judge)
    return [r.sentence for r in said]


async def score(
    lines: Sequence[ForgetLine], judge: SentenceJudge, detail: list[dict[str, Any]] | None = None
) -> Tally:
    tally = Tally()
    for line in lines:
        flagged = await flagged_pieces(line, judge)
        english = line.language == ENGLISH
        if line.request:
            asking = {piece for piece, asks in request_pieces(line) if asks}
            tally.requests += 1
            tally.requests_english += english
            tally.noticed += bool(flagged)
            tally.noticed_english += english and bool(flagged)
            tally.found += any(f in asking for f in flagged)
            wrong = not flagged
        else:
            tally.near_misses += 1
            tally.near_misses_english += english
            tally.false_alarms += bool(flagged)
            tally.false_alarms_english += english and bool(flagged)
            wrong = bool(flagged)
        if detail is not None and wrong:
            detail.append({**asdict(line), "flagged": flagged})
    return tally


def split(source: Path, into: Path) -> dict[str, int]:
    """A writer's files copied into `into/dev` and `into/heldout` by `in_dev_half`."""
    return line_files.split(source, into, load_lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.forget_lines")
    commands = parser.add_subparsers(dest="command", required=True)
    scoring = commands.add_parser("score", help="score set halves with the learned judge")
    scoring.add_argument("dirs", type=Path, nargs="+")
    scoring.add_argument("--heads", type=Path, help="a heads file (default: the shipped one)")
    scoring.add_argument("--heads-sha256", help="the heads file's pinned SHA-256")
    scoring.add_argument(
        "--forget-reader", type=Path, help="a reader of requests to forget (ADR 0165)"
    )
    scoring.add_argument("--detail", type=Path, help="the lines read wrong (dev halves only)")
    splitting = commands.add_parser("split", help="split a writer's files into dev and held out")
    splitting.add_argument("source", type=Path)
    splitting.add_argument("--into", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "split":
        sys.stdout.write(json.dumps(split(args.source, args.into)) + "\n")
        return
    detail = line_files.detail_for(args.dirs, args.detail, "lines")
    judge = judge_for("learned", args.heads, args.forget_reader, args.heads_sha256)
    if judge is None:  # "learned" always composes one
        raise SystemExit("no sentence judgement to score with")
    report = []
    for directory in args.dirs:
        tally = asyncio.run(score(load_lines([directory]), judge, detail))
        report.append({"set": str(directory), **tally.figures()})
    line_files.write_detail(args.detail, detail)
    sys.stdout.write(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
