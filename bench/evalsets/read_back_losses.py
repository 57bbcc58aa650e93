"""`python -m factledger.bench.evalsets.read_back_losses DETAIL DIR [DIR...]`: the lost facts
said only by the agent, by what the subject's next line answers (ADR 0138); and, on the dev
halves' cases, the agent's lines the writers expect never proposed (`why: agent_said`), by the
same reading: the precision risk of proposing what the subject confirmed.

DETAIL is a `losses --detail` file (with `--updates` for the updates); each miss of its
`agent_words` classes is read at the last agent line of its session holding its keywords:

- `no_reply`: the line is not followed by a subject's line;
- `yes` / `no` / `neither`: the answer judge's reading of the subject's next line to the whole
  agent line; `in_last_sentence` counts those whose keywords are in the line's last sentence
  (the question the reply answers).

Reads dev halves only (the cases and the detail); never a held-out half.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from factledger.adapters.extraction.learned.extractor import sentences_of
from factledger.api.log_setup import configure_logging
from factledger.application.judgement.ports import SentenceJudge
from factledger.bench.evalsets.cases import load_cases
from factledger.bench.evalsets.judging import judge_for
from factledger.bench.evalsets.score import holds_all

Lines = Sequence[tuple[str, str]]


def asked_at(lines: Lines, keywords: Sequence[str]) -> int | None:
    """The last agent line holding every keyword."""
    found = [
        i for i, (role, text) in enumerate(lines) if role == "agent" and holds_all(text, keywords)
    ]
    return found[-1] if found else None


async def reading(judge: SentenceJudge, lines: Lines, keywords: Sequence[str]) -> list[str]:
    """The classes of one agent-said value: its reply's reading, and where it stands."""
    at = asked_at(lines, keywords)
    if at is None or at + 1 >= len(lines) or lines[at + 1][0] != "subject":
        return ["no_reply"]
    line, reply = lines[at][1], lines[at + 1][1]
    said = str((await judge.answers([(line, reply)]))[0])
    last = holds_all(sentences_of(line)[-1], keywords)
    return [said, f"{said}+in_last_sentence"] if last else [said]


async def read_misses(judge: SentenceJudge, detail: list[dict[str, Any]]) -> dict[str, Any]:
    misses = [m for m in detail if m["class"].startswith("agent_words")]
    counts: Counter[str] = Counter()
    by_domain: Counter[str] = Counter()
    for miss in misses:
        classes = await reading(judge, [tuple(x) for x in miss["lines"]], miss["keywords"])
        counts.update(classes)
        by_domain.update(f"{miss['domain']}:{c}" for c in classes)
    return {"agent_words": len(misses), "by_reply": dict(counts), "by_domain": dict(by_domain)}


async def read_agent_said(judge: SentenceJudge, directory: Path) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    total = 0
    for case in load_cases(directory):
        for session in case.sessions:
            for item in (n for n in session.not_proposed if n.why == "agent_said"):
                total += 1
                counts.update(await reading(judge, session.lines, item.keywords))
    return {"set": directory.parent.name, "agent_said": total, "by_reply": dict(counts)}


async def run(detail: list[dict[str, Any]], sets: Sequence[Path]) -> dict[str, Any]:
    judge = judge_for("learned")
    if judge is None:
        raise RuntimeError("the learned judge did not load")
    return {
        "misses": await read_misses(judge, detail),
        "agent_said": [await read_agent_said(judge, d) for d in sets],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.read_back_losses")
    parser.add_argument("detail", type=Path, help="a `losses --detail` file of dev halves")
    parser.add_argument("sets", nargs="*", type=Path, help="blind sets' dev directories")
    args = parser.parse_args(argv)
    configure_logging(json_lines=False, level="WARNING")
    detail = json.loads(args.detail.read_text(encoding="utf-8"))
    sys.stdout.write(json.dumps(asyncio.run(run(detail, args.sets)), indent=2) + "\n")


if __name__ == "__main__":
    main()
