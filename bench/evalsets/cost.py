"""`python -m factledger.bench.evalsets.cost DIR`: what extraction costs per session, the rule
extractor and the learned one (its fields read by the heads, and by the QA reader: ADR 0107)
(and the QA reader with and without the heads' agreement under its floor: ADR 0122)
side by side on the same sessions (interleaved, so the machine's load weighs on all alike),
with the kind's fields asked for as the proposer does. Each reader's model loads before the
first timed session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.log_setup import configure_logging
from factledger.api.settings.extraction import LearnedExtractorSettings
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
    # The agreement's clause reading is timed before the heads' reader reads the same session:
    # the embedder keeps the vectors of the texts it read last, which the other would reuse.
    extractors: dict[str, Extractor] = {
        "rule": rules,
        "learned, QA reader with the heads' agreement (ADR 0122)": learned_extractor(
            LearnedExtractorSettings(field_reader="qa_reader"), rules
        ),
        "learned, QA reader at its floor alone": learned_extractor(
            LearnedExtractorSettings(field_reader="qa_reader", qa_reader_agreement=False), rules
        ),
        "learned": learned_extractor(LearnedExtractorSettings(field_reader="heads"), rules),
    }
    spent: dict[str, list[float]] = {name: [] for name in extractors}
    requests = [
        ExtractionRequest(
            transcript_of(session),
            occurred_at=session.at,
            fields=tuple(FieldSlot(f, f, f in LIST_FIELDS) for f in DOMAINS[case.domain][1]),
        )
        for case in load_cases(directory)
        for session in case.sessions
    ]
    for extractor in extractors.values():  # each model loaded, off the clock
        await extractor.extract(requests[0])
    for request in requests:
        for name, extractor in extractors.items():
            spent[name].append(await _time(extractor, request))
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
