"""`python -m factledger.bench.evalsets.screened DIR [DIR...] [--instruction-head FILE]
[--multilingual-head FILE] [--reading both|mean|english] [--weighing E M B]`: what the session
path's instruction screen would withhold of the blind conversation sets (by default as the
product reads: both heads, their log-odds weighed, ADRs 0201-0205); `... screened DIR [DIR...]
--secrets [--secret-head FILE]`: what the secret head adds to what the detectors withhold (ADR
0185's second rule); `... screened DIR [DIR...] --time`: the messages' screens as served with
each reading, milliseconds a message side by side.

Every subject line of a set's `cases-*.yaml` is a writer's ordinary customer line (the sets
hold no injection), so each line the screen reads as an instruction at its threshold is a line
the HTTP path would lose whole, with every fact said in it. Counted apart: the sessions where
the subject asked to forget something (`expect.forget_requests`) and a line naming what they
asked about (a keyword of the request; every subject line of the session when none names it)
would be withheld, so the request is never noticed. Only aggregates are printed, so a held-out
half can be scored without being read (ADR 0161).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from factledger.adapters.judgement.instructions import pieces_of
from factledger.application.judgement.types import Judgement
from factledger.application.memory.ports import Embedder
from factledger.application.sessions.instruction_screen import INSTRUCTION_MIN, InstructionScreen
from factledger.application.sessions.ports import InstructionDetector, SafetyFilter
from factledger.application.sessions.types import ALLOWED, SafetyVerdict
from factledger.domain.transcript import Message, Role


@dataclass(frozen=True, slots=True)
class ScreenedSet:
    subject_lines: tuple[str, ...]
    # Per session with a request to forget: the subject lines that name what it asked about.
    requests: tuple[tuple[str, ...], ...]


def load_set(directory: Path) -> ScreenedSet:
    lines: list[str] = []
    requests: list[tuple[str, ...]] = []
    for path in sorted(directory.glob("cases-*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            for session in case["sessions"]:
                said = [str(x["text"]) for x in session["lines"] if x["role"] == "subject"]
                lines += said
                asked = (session.get("expect") or {}).get("forget_requests") or []
                if not asked:
                    continue
                words = [str(k).lower() for r in asked for k in (r.get("keywords") or [])]
                naming = [t for t in said if any(w in t.lower() for w in words)]
                requests.append(tuple(naming or said))
    return ScreenedSet(tuple(lines), tuple(requests))


class ForgetRequestReader(Protocol):
    """Reads whether sentences ask to forget something (the sentence judge's forget flag)."""

    async def judge(self, sentences: Sequence[str]) -> list[Judgement]: ...


@dataclass(frozen=True, slots=True)
class RequestsExempt:
    """ADR 0161's candidate four, in the lab: the detector's pieces (`pieces_of`) at the bar
    that `requests` reads as requests to forget count as nothing; a text's probability is its
    other pieces' largest. At the screen's threshold it flags what the screen would withhold
    with that reader (it was not adopted)."""

    detector: InstructionDetector
    requests: ForgetRequestReader
    threshold: float = INSTRUCTION_MIN

    async def instruction_p(self, texts: Sequence[str]) -> list[float]:
        out = []
        for text in texts:
            pieces = pieces_of(text)
            read = await self.detector.instruction_p(pieces)
            at_bar = [piece for piece, p in zip(pieces, read, strict=True) if p >= self.threshold]
            judged = await self.requests.judge(at_bar) if at_bar else []
            asks = {piece for piece, j in zip(at_bar, judged, strict=True) if j.forget_request}
            kept = [p for piece, p in zip(pieces, read, strict=True) if piece not in asks]
            out.append(max(kept, default=0.0))
        return out


class _AllowsAll:
    async def screen(self, message: Message) -> SafetyVerdict:
        return ALLOWED


async def screen_set(
    screened: ScreenedSet,
    detector: InstructionDetector,
    threshold: float = INSTRUCTION_MIN,
    requests: ForgetRequestReader | None = None,
) -> dict[str, int]:
    """The instruction screen alone (the credential and card checks left out), as the session
    path runs it, with `requests` as its reader of requests to forget (ADR 0161)."""
    screen = InstructionScreen(
        _AllowsAll(),
        detector if requests is None else RequestsExempt(detector, requests),
        threshold,
    )
    return _losses(screened, await withheld_lines(screened, screen))


async def withheld_lines(screened: ScreenedSet, screen: SafetyFilter) -> set[str]:
    """The distinct subject lines `screen` refuses."""
    distinct = list(dict.fromkeys(screened.subject_lines))
    return {
        text for text in distinct if not (await screen.screen(Message(Role.SUBJECT, text))).allowed
    }


def _losses(screened: ScreenedSet, withheld: set[str]) -> dict[str, int]:
    return {
        "subject_lines": len(screened.subject_lines),
        "withheld": sum(1 for t in screened.subject_lines if t in withheld),
        "forget_sessions": len(screened.requests),
        "forget_sessions_losing_a_line": sum(
            1 for naming in screened.requests if any(t in withheld for t in naming)
        ),
    }


async def secrets_set(
    screened: ScreenedSet, base: SafetyFilter, candidate: SafetyFilter
) -> dict[str, int]:
    """What `candidate` (the detectors and a secret head) withholds that `base` (the
    detectors) does not: every line of these sets is a writer's ordinary line, so each is a
    message lost whole (ADR 0185's second rule)."""
    by_base = await withheld_lines(screened, base)
    newly = await withheld_lines(screened, candidate) - by_base
    return {
        **_losses(screened, newly),
        "withheld_by_base": sum(1 for t in screened.subject_lines if t in by_base),
    }


FORGET_REQUESTS_HELP = (
    "pieces the packaged sentence judge reads as requests to forget count as no instruction "
    "(ADR 0161's candidate four)"
)


def candidate_detector(
    embedder: Embedder,
    head: Path | None,
    requests: ForgetRequestReader | None = None,
    reading: str = "both",
    multilingual_head: Path | None = None,
    weighing: Sequence[float] | None = None,
) -> InstructionDetector:
    """The shipped instruction head over `embedder`, or the candidate head file `head`; with
    `reading` "both", each piece read by that head and the shipped multilingual head (or the
    candidate file `multilingual_head`), their log-odds weighed as shipped or by `weighing`
    (ADR 0204), with "mean" by the mean of their probabilities (ADR 0201); with `requests`,
    the pieces it reads as requests to forget exempted (`RequestsExempt`)."""
    from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
    from factledger.adapters.judgement.heads import Heads
    from factledger.adapters.judgement.instructions import (
        HEAD,
        PACKAGED_WEIGHING,
        BothEncodersInstructionDetector,
        LearnedInstructionDetector,
        MultilingualInstructionDetector,
        Weighing,
    )

    english = (
        LearnedInstructionDetector.packaged(embedder)
        if head is None
        else LearnedInstructionDetector(embedder, Heads.load(head, None, (HEAD,)))
    )
    detector: InstructionDetector = english
    if reading != "english":  # the multilingual encoder loads only for a reading of both heads
        multilingual = (
            MultilingualInstructionDetector.packaged()
            if multilingual_head is None
            else MultilingualInstructionDetector(
                UseMultilingualEmbedder(), Heads.load(multilingual_head, None, (HEAD,))
            )
        )
        weighed = PACKAGED_WEIGHING if weighing is None else Weighing(*weighing)
        detector = BothEncodersInstructionDetector(
            english, multilingual, None if reading == "mean" else weighed
        )
    return detector if requests is None else RequestsExempt(detector, requests)


def add_candidate_options(parser: argparse.ArgumentParser) -> None:
    """The instruction screen's candidates, as each scorer of the screen takes them."""
    parser.add_argument(
        "--instruction-head", type=Path, help="an English instruction head file (a candidate)"
    )
    parser.add_argument("--reading", choices=READINGS, default="both", help=READING_HELP)
    parser.add_argument(
        "--multilingual-head", type=Path, help="a candidate multilingual head file (ADR 0202)"
    )
    parser.add_argument("--weighing", type=float, nargs=3, help=WEIGHING_HELP)
    parser.add_argument("--forget-requests", action="store_true", help=FORGET_REQUESTS_HELP)


def detector_from(
    args: argparse.Namespace, embedder: Embedder, requests: ForgetRequestReader
) -> InstructionDetector:
    """The screen's detector the options of `add_candidate_options` name."""
    return candidate_detector(
        embedder,
        args.instruction_head,
        requests if args.forget_requests else None,
        args.reading,
        args.multilingual_head,
        args.weighing,
    )


READINGS = ("english", "mean", "both")
WEIGHING_HELP = (
    "ENGLISH MULTILINGUAL BIAS: with --reading both, the two heads' log-odds weighed so "
    "instead of as shipped (ADR 0204)"
)
READING_HELP = (
    "the instruction head alone, each piece read as its mean with the multilingual head's "
    "(ADR 0201), or the two heads' log-odds weighed (ADR 0204)"
)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.screened")
    parser.add_argument("sets", nargs="+", type=Path, help="blind conversation set halves")
    parser.add_argument("--threshold", type=float, default=INSTRUCTION_MIN)
    add_candidate_options(parser)
    parser.add_argument(
        "--secrets",
        action="store_true",
        help="what the secret head adds to the detectors' refusals (`withheld`: newly refused)",
    )
    parser.add_argument("--secret-head", type=Path, help="a candidate secret head file")
    parser.add_argument(
        "--time",
        action="store_true",
        help="the messages' screens as served, the instruction screen reading with the English "
        "head alone and with both heads, in milliseconds a message side by side (ADR 0201)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="with --time: passes over the lines")
    args = parser.parse_args(argv)
    if args.time:
        sys.stdout.write(json.dumps(asyncio.run(_timed(args.sets, args.rounds)), indent=1) + "\n")
        return
    if args.secrets:
        _print_totals(_secrets_figures(args.sets, args.secret_head))
        return
    from factledger.adapters.judgement.judge import LearnedJudge

    judge = LearnedJudge.packaged()
    detector = detector_from(args, judge.embedder, judge)

    async def run() -> list[dict[str, Any]]:
        return [
            {"set": str(d), **await screen_set(load_set(d), detector, args.threshold)}
            for d in args.sets
        ]

    _print_totals(asyncio.run(run()))


async def _timed(sets: Sequence[Path], rounds: int) -> dict[str, dict[str, float]]:
    from factledger.adapters.safety.detectors import DetectorSafetyFilter
    from factledger.api.bootstrap.judgement import screened_messages
    from factledger.api.settings.safety import SafetySettings
    from factledger.bench.evalsets.secret_lines import timings

    texts = list(dict.fromkeys(t for d in sets for t in load_set(d).subject_lines))
    screens = {
        reading: screened_messages(
            DetectorSafetyFilter(), None, SafetySettings(instruction_reading=reading)
        )
        for reading in READINGS
    }
    return await timings(texts, screens, rounds)


def _secrets_figures(sets: Sequence[Path], secret_head: Path | None) -> list[dict[str, Any]]:
    from factledger.bench.evalsets.secret_lines import screen_named

    base, candidate = screen_named("detectors"), screen_named("session", secret_head)

    async def run() -> list[dict[str, Any]]:
        return [{"set": str(d), **await secrets_set(load_set(d), base, candidate)} for d in sets]

    return asyncio.run(run())


def _print_totals(out: list[dict[str, Any]]) -> None:
    totals = {k: sum(int(o[k]) for o in out) for k in out[0] if k != "set"}
    sys.stdout.write(json.dumps([*out, {"set": "all", **totals}], indent=2) + "\n")


if __name__ == "__main__":
    main()
