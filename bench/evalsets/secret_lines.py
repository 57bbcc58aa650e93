"""Messages that do or do not disclose a secret (a password, a PIN, a one-time code, a key),
screened as the product screens a subject's message before anything of it is kept.

A set is a directory of `lines-*.yaml` files, each a list of `{id, lang, text, secret, kind}`:
one message, its language (ISO 639-1), whether it discloses a usable secret, and what it is
("bank login with password", "order number", "asks to reset PIN"). Writers who never saw the
product write them; sets are split into halves by the SHA-256 of each id (`split`).

    python -m factledger.bench.evalsets.secret_lines score DIR [DIR...] [--screen SCREEN]
        [--secret-head FILE] [--detail FILE]
    python -m factledger.bench.evalsets.secret_lines split WRITER_DIR --into SET_DIR
    python -m factledger.bench.evalsets.secret_lines time DIR [DIR...] [--rounds N]

Each message goes through a screen as a subject's line: `--screen detectors`, the detectors
alone (`DetectorSafetyFilter`); `--screen session` (the default), the detectors and then the
shipped secret head (`SecretScreen`, ADR 0185), or the head file `--secret-head` names: a
secret refused under any category is `caught`, a message without one refused is a
`false_alarm` (the subject's message lost whole). Only counts are printed, by English and other
languages; `--detail` (dev halves only) writes the lines screened wrong. `time` screens the
same messages with both screens, interleaved in one run (each warmed first), and prints each
one's milliseconds a message, p50 and p95, and their ratio: what the head adds to the session
path.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from factledger.adapters.safety.detectors import DetectorSafetyFilter
from factledger.application.sessions.ports import SafetyFilter
from factledger.bench.evalsets import line_files
from factledger.bench.evalsets.line_files import ratio
from factledger.domain.transcript import Message, Role

ENGLISH = "en"


@dataclass(frozen=True, slots=True)
class SecretLine:
    id: str
    lang: str
    text: str
    secret: bool
    kind: str


class SecretLineError(ValueError):
    """A line file breaks the format (the message names the file and the item)."""


def _line(raw: object, where: str) -> SecretLine:
    if not isinstance(raw, dict):
        raise SecretLineError(f"{where}: an item must be a mapping")
    item_id, text, secret = str(raw.get("id") or ""), raw.get("text"), raw.get("secret")
    if not item_id or not isinstance(text, str) or not text.strip():
        raise SecretLineError(f"{where}: every item needs an id and a text")
    if not isinstance(secret, bool):
        raise SecretLineError(f"{where} {item_id}: secret must be true or false")
    return SecretLine(item_id, str(raw.get("lang") or ""), text, secret, str(raw.get("kind") or ""))


def load_lines(paths: Sequence[Path]) -> list[SecretLine]:
    """Every item of the `lines-*.yaml` files under `paths` (directories or files), ids unique."""
    return line_files.load_items(paths, _line, SecretLineError)


@dataclass(slots=True)
class Tally:
    secrets: int = 0
    caught: int = 0
    plain: int = 0  # messages that disclose no secret
    false_alarms: int = 0
    secrets_english: int = 0
    caught_english: int = 0
    plain_english: int = 0
    false_alarms_english: int = 0

    def figures(self) -> dict[str, object]:
        return {
            **asdict(self),
            "caught_rate": ratio(self.caught, self.secrets),
            "caught_rate_english": ratio(self.caught_english, self.secrets_english),
            "caught_rate_other": ratio(
                self.caught - self.caught_english, self.secrets - self.secrets_english
            ),
            "false_alarm_rate": ratio(self.false_alarms, self.plain),
        }


async def score(
    lines: Sequence[SecretLine],
    screen: SafetyFilter,
    detail: list[dict[str, Any]] | None = None,
) -> Tally:
    tally = Tally()
    for line in lines:
        verdict = await screen.screen(Message(Role.SUBJECT, line.text))
        refused, english = not verdict.allowed, line.lang == ENGLISH
        if line.secret:
            tally.secrets += 1
            tally.secrets_english += english
            tally.caught += refused
            tally.caught_english += english and refused
        else:
            tally.plain += 1
            tally.plain_english += english
            tally.false_alarms += refused
            tally.false_alarms_english += english and refused
        if detail is not None and refused != line.secret:
            detail.append({**asdict(line), "category": verdict.category})
    return tally


SCREENS = ("detectors", "session")


def screen_named(name: str, secret_head: Path | None = None) -> SafetyFilter:
    """The detectors alone, or with the shipped secret head (or the file `secret_head`) after
    them, over the packaged embedder, as the session path composes them."""
    if name == "detectors":
        return DetectorSafetyFilter()
    from factledger.adapters.judgement.secrets import LearnedSecretDetector
    from factledger.application.sessions.secret_screen import SecretScreen

    detector = (
        LearnedSecretDetector.packaged()
        if secret_head is None
        else LearnedSecretDetector.shipped(secret_head, None, None)
    )
    return SecretScreen(DetectorSafetyFilter(), detector)


def split(source: Path, into: Path) -> dict[str, int]:
    """A writer's files copied into `into/dev` and `into/heldout` by `line_files.in_dev_half`."""
    return line_files.split(source, into, load_lines)


async def timings(
    texts: Sequence[str], screens: dict[str, SafetyFilter], rounds: int
) -> dict[str, dict[str, float]]:
    """Each screen's milliseconds a message (p50, p95) over `rounds` passes of `texts`, the
    screens taking turns message by message so that both see the same machine."""
    messages = [Message(Role.SUBJECT, text) for text in texts]
    for screen in screens.values():  # loads and first calls are not what is timed
        await screen.screen(messages[0])
    taken: dict[str, list[float]] = {name: [] for name in screens}
    for _ in range(rounds):
        for message in messages:
            for name, screen in screens.items():
                started = time.perf_counter()
                await screen.screen(message)
                taken[name].append((time.perf_counter() - started) * 1000)
    out = {
        name: {
            "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(statistics.quantiles(ms, n=20)[-1], 2),
            "messages": float(len(ms)),
        }
        for name, ms in taken.items()
    }
    first, *others = out
    for name in others:
        out[name]["p50_ratio"] = round(out[name]["p50_ms"] / out[first]["p50_ms"], 2)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.secret_lines")
    commands = parser.add_subparsers(dest="command", required=True)
    scoring = commands.add_parser("score", help="score set halves with the default filter")
    scoring.add_argument("dirs", type=Path, nargs="+")
    scoring.add_argument("--detail", type=Path, help="the lines screened wrong (dev halves only)")
    scoring.add_argument("--screen", choices=SCREENS, default="session")
    scoring.add_argument("--secret-head", type=Path, help="a candidate head file (unpinned)")
    splitting = commands.add_parser("split", help="split a writer's files into dev and held out")
    splitting.add_argument("source", type=Path)
    splitting.add_argument("--into", type=Path, required=True)
    timing = commands.add_parser("time", help="both screens' milliseconds a message, one run")
    timing.add_argument("dirs", type=Path, nargs="+")
    timing.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.command == "time":
        screens = {name: screen_named(name) for name in SCREENS}
        texts = [line.text for line in load_lines(args.dirs)]
        done = asyncio.run(timings(texts, screens, args.rounds))
        sys.stdout.write(json.dumps(done, indent=1) + "\n")
        return
    if args.command == "split":
        sys.stdout.write(json.dumps(split(args.source, args.into)) + "\n")
        return
    detail = line_files.detail_for(args.dirs, args.detail, "lines")
    screen = screen_named(args.screen, args.secret_head)
    report = []
    for directory in args.dirs:
        tally = asyncio.run(score(load_lines([directory]), screen, detail))
        report.append({"set": str(directory), **tally.figures()})
    line_files.write_detail(args.detail, detail)
    sys.stdout.write(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
