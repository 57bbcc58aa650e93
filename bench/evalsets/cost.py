"""`python -m factledger.bench.evalsets.cost DIR`: what extraction costs per session, the rule
extractor and the learned one side by side on the same sessions (interleaved, so the
machine's load weighs on both alike), with the kind's fields asked for as the proposer does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.log_setup import configure_logging
from factledger.application.memory.extraction import ExtractionRequest, FieldSlot
from factledger.application.memory.ports import Extractor
from factledger.bench.evalsets.cases import DOMAINS, LIST_FIELDS, load_cases
from factledger.bench.judgement.field_data import transcript_of


async def _time(extractor: Extractor, request: ExtractionRequest) -> float:
    started = time.perf_counter()
    await extractor.extract(request)
    return (time.perf_counter() - started) * 1000


async def measure(directory: Path) -> dict[str, object]:
    rules = RuleExtractor()
    learned = LearnedExtractor(rules, LearnedJudge.packaged())
    spent: dict[str, list[float]] = {"rule": [], "learned": []}
    for case in load_cases(directory):
        fields = tuple(FieldSlot(f, f, f in LIST_FIELDS) for f in DOMAINS[case.domain][1])
        for session in case.sessions:
            transcript = transcript_of(session)
            request = ExtractionRequest(transcript, occurred_at=session.at, fields=fields)
            spent["rule"].append(await _time(rules, request))
            spent["learned"].append(await _time(learned, request))
    return {
        name: {
            "sessions": len(ms),
            "median_ms": round(statistics.median(ms), 1),
            "p95_ms": round(sorted(ms)[int(0.95 * (len(ms) - 1))], 1),
            "mean_ms": round(statistics.fmean(ms), 1),
        }
        for name, ms in spent.items()
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.cost")
    parser.add_argument("set", type=Path)
    args = parser.parse_args(argv)
    configure_logging(json_lines=False, level="WARNING")
    sys.stdout.write(json.dumps(asyncio.run(measure(args.set)), indent=2) + "\n")


if __name__ == "__main__":
    main()
