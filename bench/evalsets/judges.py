"""`python -m factledger.bench.evalsets.judges run OUT [-- SCORER OPTIONS]` and `... compare
BASE CANDIDATE`: the judges issue 28's adoption rules read a candidate on, scored by one
command, and a candidate's figures beside its base's, judge by judge.

A judge is a group of halves the blind scorer (`python -m factledger.bench.evalsets`) reads
together, and that no model or bar was fitted on: the twelve held-out halves of record (J1:
blind sets one, three, six to eight and ten to sixteen), the held-out halves of blind sets
nineteen to twenty-eight (J2), and both halves of every later set, each briefed as a judge
for the candidates that came after it (J3 on). A rule names the judges it reads before any of
them is scored; `run` scores each with the learned extractor and judgement (and the scorer
options given after `--`), `OMP_NUM_THREADS=1`, `--jobs` at a time, into `OUT/<judge>.json`;
`compare` pools each judge's halves and prints the two runs side by side as a Markdown table,
a pooled row last; `noise BASE CANDIDATE` reads each judge's changes against its own cases'
noise (`judge_noise`: a paired bootstrap, Holm over every judge's losses).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from factledger.bench.evalsets.judge_noise import ALPHA, RESAMPLES, SEED, judge_noise, table

EVALSETS = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class Judge:
    name: str
    halves: tuple[str, ...]  # below `bench/evalsets`

    def directories(self) -> list[Path]:
        return [EVALSETS / half for half in self.halves]


def _set(n: int) -> str:
    """Blind set `n`'s directory (the first set's has no number)."""
    return "blind" if n == 1 else f"blind{n}"


def _held_out(*sets: int) -> tuple[str, ...]:
    return tuple(f"{_set(n)}/heldout" for n in sets)


def _both(*sets: int) -> tuple[str, ...]:
    return tuple(f"{_set(n)}/{half}" for n in sets for half in ("dev", "heldout"))


JUDGES: tuple[Judge, ...] = (
    # The twelve held-out halves of record.
    Judge("J1", _held_out(1, 3, 6, 7, 8, *range(10, 17))),
    Judge("J2", _held_out(*range(19, 29))),
    Judge("J3-J5", _both(29, 30, 31)),
    Judge("J6", _both(32)),
    Judge("J7", _both(33)),
    Judge("J8", _both(34)),
    Judge("J9", _both(35)),
    Judge("J10", _both(36)),
    Judge("J11", _both(37)),
    Judge("J12", _both(38)),
    Judge("J13", _both(39)),
    Judge("J14", _both(40)),
    Judge("J15", _both(41)),
    Judge("J16", _both(42)),
    Judge("J17", _both(43)),
    Judge("J18", _both(44)),
    Judge("J19", _both(45)),
    Judge("J20", _both(46)),
    Judge("J21", _both(47)),
    Judge("J22", _both(48)),
)


@dataclass(slots=True)
class Pooled:
    """The scorer's counts over a judge's halves (its `all` rows summed)."""

    expected: int = 0
    matched: int = 0
    made: int = 0
    made_right: int = 0
    updates: int = 0
    updates_matched: int = 0
    answered: int = 0
    right_notes: int = 0
    stale_top3: int = 0
    forget_sessions: int = 0
    forgets_noticed_count: int = 0
    forget_false_alarms: int = 0

    def add(self, other: Pooled) -> None:
        for f in fields(Pooled):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 0.0

    @property
    def precision(self) -> float:
        return self.made_right / self.made if self.made else 0.0


def pooled(scored: Sequence[dict[str, Any]]) -> Pooled:
    """The counts of a scorer's `--json` output, every half's `all` row summed."""
    total = Pooled()
    for half in scored:
        row = half["cases"]["all"]
        total.add(Pooled(**{f.name: int(row[f.name]) for f in fields(Pooled)}))
    return total


def scorer_command(judge: Judge, out: Path, options: Sequence[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "factledger.bench.evalsets",
        *(str(d) for d in judge.directories()),
        "--extractor",
        "learned",
        "--judgement",
        "learned",
        *options,
        "--json",
        str(out / f"{judge.name}.json"),
    ]


def _scored(command: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)  # noqa: S603


def run(
    out: Path,
    options: Sequence[str],
    judges: Sequence[Judge] = JUDGES,
    jobs: int = 2,
    score: Callable[[list[str]], None] = _scored,
) -> None:
    """Scores every judge into `out`, `jobs` scorer processes at a time."""
    out.mkdir(parents=True, exist_ok=True)
    commands = [scorer_command(j, out, options) for j in judges]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(score, commands))


def _row(name: str, base: Pooled, candidate: Pooled) -> str:
    return (
        f"| {name} | {base.matched:,} ({base.recall:.4f}) -> {candidate.matched:,} "
        f"({candidate.recall:.4f}) of {base.expected:,} "
        f"| {base.precision:.4f} -> {candidate.precision:.4f} "
        f"| {base.made:,} -> {candidate.made:,} "
        f"| {base.updates_matched} -> {candidate.updates_matched} of {base.updates} "
        f"| {base.right_notes} -> {candidate.right_notes} of {base.answered} "
        f"| {base.stale_top3} -> {candidate.stale_top3} "
        f"| {base.forgets_noticed_count} ({base.forget_false_alarms}) -> "
        f"{candidate.forgets_noticed_count} ({candidate.forget_false_alarms}) "
        f"of {base.forget_sessions} |"
    )


def scored_in_both(
    base: Path, candidate: Path, judges: Sequence[Judge]
) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The scorer's output of each judge both runs scored, by name, in the judges' order."""
    runs = {}
    for judge in judges:
        paths = [run_dir / f"{judge.name}.json" for run_dir in (base, candidate)]
        if all(p.exists() for p in paths):
            b, c = (json.loads(p.read_text(encoding="utf-8")) for p in paths)
            runs[judge.name] = (b, c)
    return runs


def compare(base: Path, candidate: Path, judges: Sequence[Judge] = JUDGES) -> str:
    """Each judge scored in both runs, side by side, then every such judge pooled."""
    lines = [
        "| judge | facts found | precision | made | updates | right notes | stale "
        "| requests to forget noticed (false alarms) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    all_base, all_candidate = Pooled(), Pooled()
    for name, (base_halves, candidate_halves) in scored_in_both(base, candidate, judges).items():
        b, c = pooled(base_halves), pooled(candidate_halves)
        all_base.add(b)
        all_candidate.add(c)
        lines.append(_row(name, b, c))
    lines.append(_row("pooled", all_base, all_candidate))
    return "\n".join(lines) + "\n"


def noise(
    base: Path,
    candidate: Path,
    judges: Sequence[Judge] = JUDGES,
    resamples: int = RESAMPLES,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> str:
    """Each judge scored in both runs, its changes read against its cases' noise."""
    runs = scored_in_both(base, candidate, judges)
    if not runs:
        raise ValueError(f"no judge was scored in both {base} and {candidate}")
    return table(judge_noise(runs, resamples, alpha, seed))


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    options: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, options = argv[:at], argv[at + 1 :]
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.judges")
    commands = parser.add_subparsers(dest="command", required=True)
    scoring = commands.add_parser("run", help="score every judge into a directory")
    scoring.add_argument("out", type=Path)
    scoring.add_argument("--jobs", type=int, default=2, help="scorer processes at a time")
    scoring.add_argument("--only", nargs="+", help="these judges (names) only")
    side = commands.add_parser("compare", help="two runs' figures, judge by judge")
    side.add_argument("base", type=Path)
    side.add_argument("candidate", type=Path)
    noisy = commands.add_parser("noise", help="each judge's changes against its cases' noise")
    noisy.add_argument("base", type=Path)
    noisy.add_argument("candidate", type=Path)
    noisy.add_argument("--resamples", type=int, default=RESAMPLES)
    noisy.add_argument("--alpha", type=float, default=ALPHA, help="family-wise, over the judges")
    noisy.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if args.command == "run":
        chosen = [j for j in JUDGES if args.only is None or j.name in args.only]
        if not chosen:
            parser.error(f"--only: no judge of {', '.join(j.name for j in JUDGES)}")
        run(args.out, options, chosen, args.jobs)
    elif options:
        parser.error(f"{args.command} takes no scorer options")
    elif args.command == "noise":
        sys.stdout.write(
            noise(args.base, args.candidate, JUDGES, args.resamples, args.alpha, args.seed)
        )
    else:
        sys.stdout.write(compare(args.base, args.candidate))


if __name__ == "__main__":
    main()
