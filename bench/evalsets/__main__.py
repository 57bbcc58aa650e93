"""`python -m factledger.bench.evalsets DIR [DIR...]`: scores the product on blind sets.

Each DIR holds `cases-*.yaml` and `answers-*.yaml` (bench/evalsets/blind/dev, .../heldout).
Prints per-domain figures as JSON (and writes them with `--json`); only aggregates are
printed, never a case's content, so a held-out half can be scored without being read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from factledger.api.log_setup import configure_logging
from factledger.bench.evalsets import score
from factledger.bench.evalsets.cases import ANY_KIND_FIELDS, DOMAINS, load_answers, load_cases
from factledger.bench.evalsets.judging import answer_labels, forget_lines, judge_for
from factledger.bench.evalsets.reader_file import (
    QaReaderFile,
    add_qa_reader_options,
    add_value_fit_file_options,
    qa_reader_file,
    value_fit_file_of,
)
from factledger.bench.evalsets.run import add_agreement_option, run_cases
from factledger.bench.evalsets.score import Scores, score_answers, score_run


async def score_directory(
    directory: Path,
    extractor: str,
    judgement: str,
    schema: str,
    heads: Path | None = None,
    field_reader: str | None = None,
    candidates: str | None = None,
    *,
    agreement: bool = False,
    list_spread: bool | None = None,
    list_cuts: bool | None = None,
    read_backs: bool | None = None,
    read_back_yes: str | None = None,
    read_back_floor: float | None = None,
    held_change: bool | None = None,
    held_change_file: Path | None = None,
    qa_reader: QaReaderFile | None = None,
    replacements_in_requests: bool | None = None,
    forget_said_lines: bool | None = None,
    forget_mentions: bool | None = None,
    mention_floor: float | None = None,
    bare_yeses: str | None = None,
    field_floors: tuple[Path, str] | None = None,
    value_fit_file: tuple[Path, str] | None = None,
    qa_reader_alone: bool | None = None,
    dropped_items: bool | None = None,
    dropped_items_model: Path | None = None,
    as_served: bool = False,
    forget_reader: Path | None = None,
    value_fit: bool | None = None,
    span_slack: float | None = None,
    value_fit_held_min: float | None = None,
    held_change_min: float | None = None,
) -> dict[str, Any]:
    cases = load_cases(directory)
    judge = judge_for(judgement, heads, forget_reader)
    started = time.perf_counter()
    # Named even for the rules: the product's default is the learned extractor (ADR 0119).
    config: dict[str, Any] = {"kind": extractor}
    if heads is not None:
        config["heads_path"] = heads
    if forget_reader is not None:
        config["forget_reader_path"] = forget_reader
    if field_reader is not None:
        config["field_reader"] = field_reader
    if candidates is not None:
        config["candidates"] = candidates
    if agreement:
        config["qa_reader_agreement"] = True
    if list_spread is not None:
        config["qa_reader_list_spread"] = list_spread
    if list_cuts is not None:
        config["qa_reader_list_cuts"] = list_cuts
    if read_backs is not None:
        config["read_backs"] = read_backs
    if read_back_yes is not None:
        config["read_back_yes"] = read_back_yes
    if read_back_floor is not None:
        config["read_back_floor"] = read_back_floor
    if held_change is not None:
        config["qa_reader_held_change"] = held_change
    if held_change_file is not None:
        config["held_change_path"] = held_change_file
    if qa_reader is not None:
        config.update(qa_reader.settings())
    if field_floors is not None:
        config["field_floors_path"], config["field_floors_sha256"] = field_floors
    if qa_reader_alone is not None:
        config["qa_reader_alone"] = qa_reader_alone
    if value_fit is not None:
        config["value_fit"] = "learned" if value_fit else "none"
    if value_fit_file is not None:
        config["value_fit_path"], config["value_fit_sha256"] = value_fit_file
    proposals: dict[str, Any] = {}
    if replacements_in_requests is not None:
        proposals["replacements_in_requests"] = replacements_in_requests
    if forget_said_lines is not None:
        proposals["forget_said_lines"] = forget_said_lines
    if forget_mentions is not None:
        proposals["forget_placement_mentions"] = forget_mentions
    if mention_floor is not None:
        config["qa_reader_mention_floor"] = mention_floor
    if span_slack is not None:
        config["qa_reader_span_slack"] = span_slack
    if value_fit_held_min is not None:
        config["value_fit_held_min"] = value_fit_held_min
    if held_change_min is not None:
        config["held_change_min"] = held_change_min
    if bare_yeses is not None:
        config["bare_yeses"] = bare_yeses
    if dropped_items is not None:
        proposals["dropped_items"] = dropped_items
    if dropped_items_model is not None:
        proposals["dropped_items_model_path"] = dropped_items_model
    runs = (
        await run_cases(
            cases,
            extractor=config,
            schema=schema,
            proposals=proposals or None,
            as_served=as_served,
        )
        if cases
        else []
    )
    elapsed = time.perf_counter() - started
    scores = Scores()
    for run in runs:
        fields = _reviewer_map(run.case.domain) if schema == "none" else None
        scores.add(
            run.case, score_run(run, await forget_lines(judge, run.case, run.withheld), fields)
        )
    answers = load_answers(directory)
    result: dict[str, Any] = {
        "set": directory.name,
        "extractor": extractor,
        "judgement": judgement,
        "field_reader": field_reader or "default",
        "candidates": candidates or "default",
        "agreement": agreement,
        "list_spread": "default" if list_spread is None else list_spread,
        "list_cuts": "default" if list_cuts is None else list_cuts,
        "read_backs": "default" if read_backs is None else read_backs,
        "read_back_yes": read_back_yes or "default",
        "read_back_floor": "default" if read_back_floor is None else read_back_floor,
        "held_change": "default" if held_change is None else held_change,
        "qa_reader": "default" if qa_reader is None else qa_reader.described(),
        "replacements_in_requests": "default"
        if replacements_in_requests is None
        else replacements_in_requests,
        "forget_said_lines": "default" if forget_said_lines is None else forget_said_lines,
        "forget_mentions": "default" if forget_mentions is None else forget_mentions,
        "mention_floor": "default" if mention_floor is None else mention_floor,
        "span_slack": "default" if span_slack is None else span_slack,
        "value_fit_held_min": "default" if value_fit_held_min is None else value_fit_held_min,
        "held_change_min": "default" if held_change_min is None else held_change_min,
        "bare_yeses": bare_yeses or "default",
        "field_floors": "none" if field_floors is None else field_floors[0].name,
        "qa_reader_alone": "default" if qa_reader_alone is None else qa_reader_alone,
        "value_fit": "default" if value_fit is None else value_fit,
        "value_fit_file": "packaged" if value_fit_file is None else value_fit_file[0].name,
        "dropped_items": "default" if dropped_items is None else dropped_items,
        "dropped_items_model": "none" if dropped_items_model is None else dropped_items_model.name,
        "heads": "shipped" if heads is None else heads.name,
        "forget_reader": "none" if forget_reader is None else forget_reader.name,
        "schema": schema,
        "as_served": as_served,
        "keywords": "once" if score.keyword_reading is score.holds_once else "as-written",
        "sessions": sum(len(c.sessions) for c in cases),
        "seconds": round(elapsed, 1),
        "cases": scores.as_dict(),
        "per_case": scores.per_case(),
    }
    if answers:
        result["answers"] = score_answers(answers, await answer_labels(judge, answers)).as_dict()
    return result


def _reviewer_map(domain: str) -> dict[str, str] | None:
    """For a kind the product has built-in fields of, its own names; else a reviewer's map."""
    kind, _ = DOMAINS[domain]
    return None if kind in ("lead", "customer") else dict(ANY_KIND_FIELDS)


def _switch(choice: str | None) -> bool | None:
    """An `on`/`off` option as the setting it gives; None (not given): the product's default."""
    return None if choice is None else choice == "on"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets")
    parser.add_argument("sets", nargs="+", type=Path, help="directories of blind set files")
    parser.add_argument("--extractor", default="rule", choices=("rule", "learned"))
    parser.add_argument(
        "--judgement",
        default="none",
        choices=("none", "learned"),
        help="none: the product without sentence judgement (a relayed confirmation is taken "
        "as given, no forget request is noticed); learned: the shipped judgement heads",
    )
    parser.add_argument(
        "--schema",
        default="bare",
        choices=("bare", "named", "none"),
        help="bare: each field configured as a bare type; named: each field also names the "
        "extractor slot of its own name; none: no kind configured (the built-in lead and "
        "customer fields, any other kind's facts scored through a reviewer's map)",
    )
    parser.add_argument(
        "--heads", type=Path, help="the learned extractor's heads file (default: the shipped)"
    )
    parser.add_argument(
        "--forget-reader",
        type=Path,
        help="a reader of requests to forget beside the heads' flag (ADR 0165; `python -m "
        "factledger.bench.judgement.forget_reader fit`), read with --heads' flag",
    )
    parser.add_argument(
        "--field-reader",
        choices=("heads", "qa_reader"),
        help="the learned extractor's field reader (default: the product's default)",
    )
    parser.add_argument(
        "--candidates",
        choices=("rules", "sentences", "rules_and_sentences"),
        help="who proposes the learned extractor's candidates: rules, the subject's "
        "sentences with no rule (ADR 0125), or the rules' and, for memories, the sentences "
        "no rule fact stands on (ADR 0157; default: the product's default)",
    )
    add_agreement_option(parser)
    parser.add_argument(
        "--list-spread",
        choices=("on", "off"),
        help="a list field's spans measured by all its items' mass (ADR 0129; default: the "
        "product's default)",
    )
    parser.add_argument(
        "--list-cuts",
        choices=("on", "off"),
        help="a list field's span cut where one item ends and the next begins (ADR 0162; "
        "default: the product's default)",
    )
    parser.add_argument(
        "--read-backs",
        choices=("on", "off"),
        help="values the agent reads back and the subject confirms proposed (ADR 0138; "
        "default: the product's default, off)",
    )
    parser.add_argument(
        "--read-back-yes",
        choices=("judge", "pair_reader"),
        help="who reads the reply to a value the agent read back as a yes (ADR 0138; "
        "default: the product's default)",
    )
    parser.add_argument(
        "--read-back-floor",
        type=float,
        help="the QA reader's bar for a confirmed read-back's value (ADR 0138; default: each "
        "field's floor)",
    )
    parser.add_argument(
        "--held-change",
        choices=("on", "off"),
        help="a held field's answers under the held floor kept on the pair head's reading of a "
        "change (ADR 0137; default: the product's default)",
    )
    parser.add_argument(
        "--held-change-file",
        type=Path,
        help="the pair head's file of one's own (read unpinned: a lab file), with --held-change on",
    )
    parser.add_argument(
        "--dropped-items",
        choices=("on", "off"),
        help="propose removing the held list items a sentence drops (ADR 0159; default: off)",
    )
    parser.add_argument(
        "--dropped-items-model",
        type=Path,
        help="a dropped-items model file (`python -m factledger.bench.judgement.dropped fit`), "
        "read unpinned; needed with --dropped-items on (ADR 0159)",
    )
    parser.add_argument(
        "--replacements-in-requests",
        choices=("on", "off"),
        help="a request to forget read once more for the value replacing a held field (ADR "
        "0151; default: the product's default)",
    )
    parser.add_argument(
        "--forget-said-lines",
        choices=("on", "off"),
        help="a request to forget that concerns no field names the line it concerns (ADR "
        "0174, 0175; default: the product's default, on)",
    )
    parser.add_argument(
        "--forget-mentions",
        choices=("on", "off"),
        help="a request placed on a field by closeness only where the QA reader reads it "
        "speaking of that field (ADR 0218; default: the product's default)",
    )
    parser.add_argument(
        "--bare-yeses",
        choices=("kept", "dropped"),
        help="a subject's answer that is only a yes to a value the agent says back: kept as "
        "the field's value or dropped (ADR 0221; default: the product's default)",
    )
    parser.add_argument(
        "--mention-floor",
        type=float,
        help="the QA reader's bar for --forget-mentions (default: the packaged file's own; "
        "a reader file of one's own needs one)",
    )
    parser.add_argument(
        "--span-slack",
        type=float,
        help="how far under its best pair's score a wider span in its sentence may score and "
        "be a single-valued field's answer (ADR 0227; 0: none; default: the product's default)",
    )
    parser.add_argument(
        "--value-fit-held-min",
        type=float,
        help="the value-fit head's bar for a held field's answers (ADR 0231; 0: every one "
        "kept; default: the product's default)",
    )
    parser.add_argument(
        "--held-change-min",
        type=float,
        help="the held-change head's threshold of a change (ADR 0233; default: the product's "
        "default)",
    )
    parser.add_argument(
        "--field-floors",
        type=Path,
        help="a file of the QA reader's floors per field (ADR 0152), with --field-floors-sha256",
    )
    parser.add_argument("--field-floors-sha256", help="the floors file's pin")
    parser.add_argument(
        "--qa-reader-alone",
        choices=("on", "off"),
        help="the QA reader reads each window alone, the packaged file at the floors chosen on "
        "reads made so (ADR 0156; default: the product's default)",
    )
    parser.add_argument(
        "--value-fit",
        choices=("on", "off"),
        help="an unheld field's answers read against its labelled values by the shipped "
        "value-fit head (ADR 0211; default: the product's default)",
    )
    add_value_fit_file_options(parser)
    add_qa_reader_options(parser)
    parser.add_argument(
        "--as-served",
        action="store_true",
        help="each line screened as the session path screens it (the safety filter and the "
        "instruction screen): a line it withholds is never recorded (ADR 0161)",
    )
    parser.add_argument(
        "--keywords",
        choices=("once", "as-written"),
        default="once",
        help="how a value holds its keywords: spellings of one word asked for once, or every "
        "keyword as written, the rule before ADR 0222 (to rescore a base beside a candidate)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    score.keyword_reading = score.holds_once if args.keywords == "once" else score.holds_as_written
    reader_file = qa_reader_file(args, parser)
    floors_file = None
    if args.field_floors is not None:
        if args.field_floors_sha256 is None:
            parser.error("--field-floors-sha256: required with --field-floors")
        floors_file = (args.field_floors, args.field_floors_sha256)
    value_fit_file = value_fit_file_of(args, parser)
    configure_logging(json_lines=False, level="WARNING")
    if args.field_reader is not None and args.extractor != "learned":
        parser.error("--field-reader: only with --extractor learned")
    if args.candidates is not None and args.extractor != "learned":
        parser.error("--candidates: only with --extractor learned")
    if args.agreement and args.extractor != "learned":
        parser.error("--agreement: only with --extractor learned")
    if args.read_backs is not None and args.extractor != "learned":
        parser.error("--read-backs: only with --extractor learned")
    for given, name in (
        (args.read_back_yes, "--read-back-yes"),
        (args.read_back_floor, "--read-back-floor"),
    ):
        if given is not None and args.read_backs != "on":
            parser.error(f"{name}: only with --read-backs on")
    results = [
        asyncio.run(
            score_directory(
                d,
                args.extractor,
                args.judgement,
                args.schema,
                args.heads,
                args.field_reader,
                args.candidates,
                agreement=args.agreement,
                list_spread=_switch(args.list_spread),
                list_cuts=_switch(args.list_cuts),
                read_backs=_switch(args.read_backs),
                read_back_yes=args.read_back_yes,
                read_back_floor=args.read_back_floor,
                held_change=_switch(args.held_change),
                held_change_file=args.held_change_file,
                qa_reader=reader_file,
                replacements_in_requests=_switch(args.replacements_in_requests),
                forget_said_lines=_switch(args.forget_said_lines),
                forget_mentions=_switch(args.forget_mentions),
                mention_floor=args.mention_floor,
                bare_yeses=args.bare_yeses,
                field_floors=floors_file,
                value_fit_file=value_fit_file,
                qa_reader_alone=_switch(args.qa_reader_alone),
                dropped_items=_switch(args.dropped_items),
                dropped_items_model=args.dropped_items_model,
                as_served=args.as_served,
                forget_reader=args.forget_reader,
                value_fit=_switch(args.value_fit),
                span_slack=args.span_slack,
                value_fit_held_min=args.value_fit_held_min,
                held_change_min=args.held_change_min,
            )
        )
        for d in args.sets
    ]
    text = json.dumps(results, indent=2)
    sys.stdout.write(text + "\n")
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
