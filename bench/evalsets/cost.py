"""`python -m factledger.bench.evalsets.cost DIR`: what extraction costs per session, the rule
extractor and the learned one (its fields read by the heads, and by the QA reader: ADR 0107;
the QA reader with the heads' agreement under its floor: ADR 0122; with the answer stance: ADR
0121; its candidates the subject's sentences, no rule: ADR 0125; a list field's spans measured
by all its items: ADR 0129; the pair head on held values: ADR 0137, 0145) side by side on the same
sessions (interleaved, so the machine's load weighs on all alike), each asked twice: with the
kind's fields as the proposer asks, and with none as the memory backend asks. Each reader's
model loads before the first timed session. Wall and process CPU time (every thread's) per call.
With `--held`, a session's fields carry what the case's earlier sessions stated of them (the
labelled keywords as the held words), as a subject's later sessions reach the worker: the held
floor and a pair head (`--held-change FILE`) act only there.

The learned extractors share one embedder, whose cache keeps the vectors of the texts it read:
each extractor's two calls on a session are timed from a cache that holds only the kind's
field names, as a worker meets a new session, else an extractor timed after another on the
same session is served the vectors the first paid for (before ADR 0127 the default was timed
after the agreement and read 0.4x of the agreement's time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.vector_cache import VectorCache
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.judgement.fields import field_text
from factledger.adapters.judgement.judge import LearnedJudge
from factledger.api.bootstrap.judgement import learned_extractor, learned_judge
from factledger.api.log_setup import configure_logging
from factledger.api.settings.extraction import LearnedExtractorSettings
from factledger.application.memory.extraction import ExtractionRequest, FieldSlot
from factledger.application.memory.ports import Extractor
from factledger.bench.evalsets.cases import DOMAINS, LIST_FIELDS, Case, load_cases
from factledger.bench.judgement.field_data import transcript_of


async def _time(extractor: Extractor, request: ExtractionRequest) -> tuple[float, float]:
    """Wall and CPU milliseconds of one extraction."""
    started, cpu = time.perf_counter(), time.process_time()
    await extractor.extract(request)
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000


def read_back_extractors(rules: Extractor) -> dict[str, Extractor]:
    """The default (read-backs off since ADR 0138's merge) beside read-backs confirmed by the
    answer judge and by its pair reader alone (ADR 0138)."""
    return {
        "learned, QA reader (the default, no read-backs)": learned_extractor(
            LearnedExtractorSettings(), rules
        ),
        "learned, QA reader, read-backs confirmed by the answer judge (ADR 0138)": (
            learned_extractor(LearnedExtractorSettings(read_backs=True), rules)
        ),
        "learned, QA reader, read-backs confirmed by the pair reader (ADR 0138)": (
            learned_extractor(
                LearnedExtractorSettings(read_backs=True, read_back_yes="pair_reader"), rules
            )
        ),
    }


def held_slots(case: Case, before: int) -> tuple[FieldSlot, ...]:
    """The case's fields as its session `before` meets them: each field an earlier session
    stated is held, its latest statement's keywords the held words."""
    held: dict[str, str] = {}
    for session in case.sessions[:before]:
        for expected in session.proposals:
            held[expected.field] = " ".join(expected.keywords)
    return tuple(
        FieldSlot(f, f, f in LIST_FIELDS, held=f in held, held_value=held.get(f))
        for f in DOMAINS[case.domain][1]
    )


def requests_of(directory: Path, *, held: bool) -> list[ExtractionRequest]:
    """Every session of the set, with the kind's fields (held from earlier sessions if asked)."""
    return [
        ExtractionRequest(
            transcript_of(session),
            occurred_at=session.at,
            fields=held_slots(case, n)
            if held
            else tuple(FieldSlot(f, f, f in LIST_FIELDS) for f in DOMAINS[case.domain][1]),
        )
        for case in load_cases(directory)
        for n, session in enumerate(case.sessions)
    ]


async def measure(
    directory: Path,
    reader: LearnedExtractorSettings | None = None,
    *,
    read_backs: bool = False,
    held: bool = False,
    held_change: LearnedExtractorSettings | None = None,
    field_floors: LearnedExtractorSettings | None = None,
) -> dict[str, object]:
    """`reader`: a QA reader file's settings (path, pin, floors) timed beside the default;
    `read_backs`: only the default and its read-back variants (ADR 0138); `held`: fields held
    from the case's earlier sessions; `held_change`: only the QA reader without a pair head and
    with the given one (its settings, ADR 0137, 0145); `field_floors`: only the QA reader
    without and with the given floors per field (its settings, ADR 0152)."""
    rules = RuleExtractor()
    # The agreement's clause reading is timed before the heads' reader reads the same session:
    # the embedder keeps the vectors of the texts it read last, which the other would reuse.
    extractors: dict[str, Extractor] = {
        "rule": rules,
        "learned, QA reader with the heads' agreement (ADR 0122)": learned_extractor(
            LearnedExtractorSettings(qa_reader_agreement=True), rules
        ),
        "learned, QA reader (the default)": learned_extractor(LearnedExtractorSettings(), rules),
        **(
            {"learned, QA reader (the given file)": learned_extractor(reader, rules)}
            if reader is not None
            else {}
        ),
        "learned, QA reader with list fields' spread (ADR 0129)": learned_extractor(
            LearnedExtractorSettings(qa_reader_list_spread=True), rules
        ),
        "learned, QA reader with the answer stance (ADR 0121)": learned_extractor(
            LearnedExtractorSettings(answer_stance="learned"), rules
        ),
        "learned, sentences": learned_extractor(
            LearnedExtractorSettings(candidates="sentences"), rules
        ),
        "learned, the heads' field reader": learned_extractor(
            LearnedExtractorSettings(field_reader="heads"), rules
        ),
    }
    if read_backs:
        extractors = {"rule": rules, **read_back_extractors(rules)}
    if held_change is not None:
        extractors = {
            "rule": rules,
            "learned, QA reader without the pair head": learned_extractor(
                LearnedExtractorSettings(qa_reader_held_change=False), rules
            ),
            "learned, QA reader with the given pair head": learned_extractor(held_change, rules),
        }
    if field_floors is not None:
        extractors = {
            "rule": rules,
            "learned, QA reader without floors per field": learned_extractor(
                LearnedExtractorSettings(), rules
            ),
            "learned, QA reader with the given floors per field": learned_extractor(
                field_floors, rules
            ),
        }
    asked = requests_of(directory, held=held or held_change is not None)
    calls = {"fields": asked, "memories": [replace(r, fields=()) for r in asked]}
    spent: dict[tuple[str, str], list[tuple[float, float]]] = {
        (name, call): [] for name in extractors for call in calls
    }
    for extractor in extractors.values():  # each model loaded, off the clock
        await extractor.extract(asked[0])
    for n in range(len(asked)):
        for name, extractor in extractors.items():
            await _as_new(asked[n])  # then both calls, as a worker makes them on one session
            for call, requests in calls.items():
                spent[name, call].append(await _time(extractor, requests[n]))
    return {f"{name} ({call})": _figures(times) for (name, call), times in spent.items()}


async def _as_new(request: ExtractionRequest) -> None:
    """The shared embedder's cache as a worker's is when a new session of the kind comes."""
    judge = learned_judge()
    if isinstance(judge, LearnedJudge) and isinstance(judge.embedder, OnnxEmbedder):
        embedder = judge.embedder
        embedder.vectors = VectorCache(embedder.vectors.capacity)
        await embedder.embed([field_text(f.field) for f in request.fields])


def _figures(times: list[tuple[float, float]]) -> dict[str, float]:
    wall = sorted(w for w, _ in times)
    return {
        "sessions": len(times),
        "median_ms": round(statistics.median(wall), 1),
        "p95_ms": round(wall[int(0.95 * (len(wall) - 1))], 1),
        "mean_ms": round(statistics.fmean(wall), 1),
        "mean_cpu_ms": round(statistics.fmean(c for _, c in times), 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.cost")
    parser.add_argument("set", type=Path)
    parser.add_argument("--reader", type=Path, help="a QA reader file timed beside the default")
    parser.add_argument("--sha256", help="its pin")
    parser.add_argument("--floor", type=float, help="its floor")
    parser.add_argument("--list-floor", type=float)
    parser.add_argument("--held-floor", type=float)
    parser.add_argument(
        "--read-backs", action="store_true", help="only the default and its read-back variants"
    )
    parser.add_argument("--held", action="store_true", help="fields held from earlier sessions")
    parser.add_argument(
        "--held-change", type=Path, help="a pair head file timed beside none (fields held)"
    )
    parser.add_argument("--held-change-sha256", help="its pin")
    parser.add_argument(
        "--field-floors", type=Path, help="a floors-per-field file timed beside none"
    )
    parser.add_argument("--field-floors-sha256", help="its pin")
    args = parser.parse_args(argv)
    configure_logging(json_lines=False, level="WARNING")
    reader = None
    if args.reader is not None:
        reader = LearnedExtractorSettings(
            qa_reader_path=args.reader,
            qa_reader_sha256=args.sha256,
            qa_reader_floor=args.floor,
            qa_reader_list_floor=args.list_floor,
            qa_reader_held_floor=args.held_floor,
        )
    held_change = None
    if args.held_change is not None:
        held_change = LearnedExtractorSettings(
            qa_reader_held_change=True,
            held_change_path=args.held_change,
            held_change_sha256=args.held_change_sha256,
        )
    figures = measure(
        args.set,
        reader,
        read_backs=args.read_backs,
        held=args.held,
        held_change=held_change,
        field_floors=None
        if args.field_floors is None
        else LearnedExtractorSettings(
            field_floors_path=args.field_floors, field_floors_sha256=args.field_floors_sha256
        ),
    )
    sys.stdout.write(json.dumps(asyncio.run(figures), indent=2) + "\n")


if __name__ == "__main__":
    main()
