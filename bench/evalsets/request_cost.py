"""`python -m factledger.bench.evalsets.request_cost DIR [DIR...]`: what reading a request to
forget once more for the value replacing a held field (ADR 0151) adds to the proposer's
extraction per session.

Each session is met as `cost --held` meets it (the kind's fields, those an earlier session of
the case stated held, their keywords the held words) and as the proposer reads it: without the
sentences the judgement reads as requests to forget (found off the clock: both builds find
them). Timed per session, interleaved, each from an embedder cache holding only the field
names: the learned extractor (the default) on that transcript (the base), and the same call
plus, where a request was noticed and a held single-valued field is asked, the extractor on the
request sentences alone asked those fields (the candidate). Wall and process CPU per session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace
from pathlib import Path

from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.bootstrap.judgement import learned_extractor, learned_judge
from factledger.api.log_setup import configure_logging
from factledger.api.settings.extraction import LearnedExtractorSettings
from factledger.application.memory.extraction import ExtractionRequest
from factledger.application.memory.ports import Extractor
from factledger.application.review.forget_requests import (
    SaidRequest,
    said_requests,
    without_requests,
)
from factledger.application.review.replacements import replaceable, requests_only
from factledger.bench.evalsets.cost import _as_new, _figures, _time, requests_of


async def _read_again(
    extractor: Extractor, request: ExtractionRequest, requests: list[SaidRequest]
) -> tuple[float, float]:
    fields = replaceable(request.fields)
    if not requests or not fields:
        return 0.0, 0.0
    again = replace(request, transcript=requests_only(request.transcript, requests), fields=fields)
    return await _time(extractor, again)


async def measure(directories: list[Path]) -> dict[str, object]:
    extractor = learned_extractor(LearnedExtractorSettings(), RuleExtractor())
    judge = learned_judge()
    asked = [r for d in directories for r in requests_of(d, held=True)]
    said = [await said_requests(r.transcript, judge) for r in asked]
    screened = [
        replace(r, transcript=without_requests(r.transcript, s))
        for r, s in zip(asked, said, strict=True)
    ]
    await extractor.extract(asked[0])  # the models loaded, off the clock
    base: list[tuple[float, float]] = []
    candidate: list[tuple[float, float]] = []
    read_again = 0
    for n, request in enumerate(screened):
        await _as_new(request)
        first = await _time(extractor, request)
        base.append(first)
        await _as_new(request)
        wall, cpu = await _time(extractor, request)
        extra = await _read_again(extractor, asked[n], said[n])
        read_again += extra != (0.0, 0.0)
        candidate.append((wall + extra[0], cpu + extra[1]))
    return {
        "sessions": len(asked),
        "sessions_with_a_request": sum(bool(s) for s in said),
        "sessions_read_again": read_again,
        "base (the session without its requests)": _figures(base),
        "candidate (and the requests read again, ADR 0151)": _figures(candidate),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.request_cost")
    parser.add_argument("sets", nargs="+", type=Path)
    args = parser.parse_args(argv)
    configure_logging(json_lines=False, level="WARNING")
    sys.stdout.write(json.dumps(asyncio.run(measure(args.sets)), indent=2) + "\n")


if __name__ == "__main__":
    main()
