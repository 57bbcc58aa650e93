"""`python -m factledger.bench.judgement.qa_reader train|evaluate ...` (needs torch).

train    --base MODEL.safetensors --out DIR [--corpus DIR ...] [--minutes 60] [--epochs 3]
         [--init-onnx FILE [--init-onnx-sha256 HEX]] (instead of --base: go on from an exported
         reader, the packaged int8 file by default pin, its flags head fresh; ADR 0153)
         [--list-items] (a list field's items each against no value, ADR 0139)
         [--export] (then also DIR/qa-reader-int8.onnx, its SHA-256, its floor by ADR
         0107's rule and its list fields' floor by ADR 0113's on the kept-out cases, in
         DIR/card.json)
evaluate --out DIR [--reader FILE] [--blind DIR ...] [--current] [--no-reader] [--flags]
         (scores DIR/reader.pt or FILE, and with --current the shipped field reader on the same
         lines; writes DIR/evaluation.json, or DIR/shipped-reader.json with --no-reader)
export   --reader FILE --out DIR (a one-pass reader as ONNX, float and int8; ADR 0106; FILE a
         checkpoint, or an exported `.onnx` with --sha256 HEX: exported again, ADR 0153)
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.adapters.judgement.qa_reader.reader import (
    PACKAGED_QA_READER,
    PACKAGED_QA_READER_SHA256,
)
from factledger.bench.judgement.conversations import CONVERSATIONS, load_training_cases
from factledger.bench.judgement.qa_reader.batches import training_examples
from factledger.bench.judgement.qa_reader.evaluate import evaluate, flag_figures, load_reader
from factledger.bench.judgement.qa_reader.export import INT8_FILE, export
from factledger.bench.judgement.qa_reader.fields_pass import FieldsTokens
from factledger.bench.judgement.qa_reader.fields_train import line_examples, line_length, line_loss
from factledger.bench.judgement.qa_reader.floor import floor_figures
from factledger.bench.judgement.qa_reader.model import FieldsReader, QaReader, from_base, from_onnx
from factledger.bench.judgement.qa_reader.pairs import split_pairs
from factledger.bench.judgement.qa_reader.tokens import PairTokens, load_tokenizer
from factledger.bench.judgement.qa_reader.train import Budget, fit, pair_length, pair_loss

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"


def _train(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    corpora = [
        Path(c) / CONVERSATIONS if (Path(c) / CONVERSATIONS).is_dir() else Path(c)
        for c in args.corpus or [str(DATA)]
    ]
    loaded = load_training_cases(corpora)
    train_pairs, kept = split_pairs(loaded.cases)
    tokenizer = load_tokenizer(Path(args.tokenizer))
    loss: Callable[[QaReader, Sequence[Any]], torch.Tensor]
    length: Callable[[Any], int]
    init: dict[str, object] = {}
    reader: QaReader
    if args.formulation == "line":
        examples: list[Any] = line_examples(
            train_pairs, FieldsTokens(tokenizer, args.max_tokens or 128), args.seed
        )
        if args.init_onnx:
            reader, init = _from_file(args)
        else:
            reader = from_base(Path(args.base), FieldsReader)
        length = line_length
        if args.field_words and isinstance(reader, FieldsReader):
            reader.use_field_words()
        loss = functools.partial(
            line_loss, no_answer=args.no_answer_weight, list_items=args.list_items
        )
    else:
        examples = training_examples(
            train_pairs, PairTokens(tokenizer, args.max_tokens or 96), args.seed
        )
        reader, loss, length = from_base(Path(args.base)), pair_loss, pair_length
    print(  # noqa: T201 - the lab's report
        f"cases {len(loaded.cases)} dropped {dict(loaded.dropped)}; training pairs "
        f"{len(train_pairs)} ({sum(bool(p.spans) for p in train_pairs)} answered), inputs "
        f"{len(examples)} ({args.formulation}); kept-out pairs {len(kept)}",
        flush=True,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.init:
        reader.load_state_dict(torch.load(args.init))
    budget = Budget(
        args.minutes * 60,
        args.epochs,
        args.batch,
        args.learning_rate,
        seed=args.seed,
        bf16=args.bf16,
        epoch_checkpoints=True,
        head_rate=args.head_rate,
    )
    done = fit(reader, examples, budget, out, loss, length)
    card = {
        "base": Path(args.base).name if args.base else None,
        **({"init_onnx": init} if init else {}),
        "layers": len(reader.layers),
        "max_tokens": args.max_tokens,
        "budget": {
            "minutes": args.minutes,
            "epochs": args.epochs,
            "batch": args.batch,
            "learning_rate": args.learning_rate,
            "seed": args.seed,
            "bf16": args.bf16,
            "head_rate": args.head_rate,
        },
        "training_pairs": len(train_pairs),
        "formulation": args.formulation,
        "no_answer_weight": args.no_answer_weight,
        "field_words": args.field_words or bool(init),
        "list_items": args.list_items,
        "inputs": len(examples),
        "threads": args.threads,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **done,
    }
    if args.export:
        if not isinstance(reader, FieldsReader) or not reader.pools_field_words:
            raise SystemExit("--export: only a one-pass reader asking with its fields' words")
        pinned = export(reader, out)[INT8_FILE]
        chosen = floor_figures(out / INT8_FILE, pinned, corpora)
        card["export"] = {
            "file": INT8_FILE,
            "sha256": pinned,
            "floor": chosen["floor"],
            "list_floor": chosen["list_floor"],
        }
        card["kept_out"] = chosen["kept_out line level"]
        card["kept_out_list_fields"] = chosen["kept_out line level, list fields"]
    (out / "card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(card, indent=2))  # noqa: T201 - the lab's report


def _from_file(args: argparse.Namespace) -> tuple[FieldsReader, dict[str, object]]:
    """The reader an exported file holds, and what the card says of it (ADR 0153)."""
    path = Path(args.init_onnx)
    pin = args.init_onnx_sha256 or (
        PACKAGED_QA_READER_SHA256 if path.resolve() == PACKAGED_QA_READER.resolve() else None
    )
    if pin is None:
        raise SystemExit("--init-onnx: give the file's --init-onnx-sha256")
    reader, fit = from_onnx(path, pin)
    return reader, {"file": path.name, "sha256": pin, "fresh": list(fit.left_as_started)}


def _check_train(args: argparse.Namespace) -> None:
    if bool(args.base) == bool(args.init_onnx):
        raise SystemExit("train: give --base or --init-onnx (one of them)")
    if args.init_onnx and (args.init or args.formulation != "line"):
        raise SystemExit("--init-onnx: a one-pass reader (line formulation), without --init")


def _evaluate(args: argparse.Namespace) -> None:
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    weights = Path(args.reader) if args.reader else out / "reader.pt"
    corpora = [Path(c) for c in args.corpus or [str(DATA / CONVERSATIONS)]]
    figures = evaluate(
        None if args.no_reader else weights,
        tokenizer=Path(args.tokenizer),
        corpora=corpora,
        blind=[Path(b) for b in args.blind],
        current=args.current,
        max_tokens=args.max_tokens,
    )
    if args.flags and not args.no_reader:
        reader = load_reader(weights)
        if isinstance(reader, FieldsReader):
            figures["kept_out flags"] = flag_figures(
                reader, Path(args.tokenizer), corpora, (0.3, 0.5, 0.7)
            )
    name = "shipped-reader.json" if args.no_reader else "evaluation.json"
    if args.reader and not args.no_reader:
        name = f"evaluation-{weights.stem}.json"
    (out / name).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))  # noqa: T201 - the lab's report


def _export(args: argparse.Namespace) -> None:
    path = Path(args.reader)
    reader = from_onnx(path, args.sha256)[0] if path.suffix == ".onnx" else load_reader(path)
    if not isinstance(reader, FieldsReader):
        raise SystemExit("only a one-pass reader (FieldsReader) is exported")
    print(json.dumps(export(reader, Path(args.out)), indent=2))  # noqa: T201 - the lab's report


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.qa_reader")
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train")
    train.add_argument("--base", help="the base model's model.safetensors")
    train.add_argument("--out", required=True)
    train.add_argument("--corpus", action="append")
    train.add_argument("--init", help="a reader.pt to go on from")
    train.add_argument(
        "--init-onnx",
        help="an exported reader (.onnx, int8 or float) to go on from, instead of --base",
    )
    train.add_argument(
        "--init-onnx-sha256", help="its pin (default: the packaged file's, for that file)"
    )
    train.add_argument("--minutes", type=float, default=60.0)
    train.add_argument("--epochs", type=int, default=3)
    train.add_argument("--batch", type=int, default=32)
    train.add_argument("--learning-rate", type=float, default=1e-4)
    train.add_argument("--seed", type=int, default=28)
    train.add_argument(
        "--formulation",
        choices=("line", "pair"),
        default="line",
        help="one pass per line for all its fields, or one per (line, field)",
    )
    train.add_argument(
        "--no-answer-weight",
        type=float,
        default=1.0,
        help="span-loss weight of a field the line does not state (line formulation)",
    )
    train.add_argument(
        "--field-words",
        action="store_true",
        help="each field asks with its marker's and its words' mean state (line formulation)",
    )
    train.add_argument(
        "--list-items",
        action="store_true",
        help="a list field's items each against no value, not sharing one softmax (ADR 0139)",
    )
    train.add_argument(
        "--head-rate", type=float, default=1.0, help="the fresh heads' rate, times the encoder's"
    )
    train.add_argument("--bf16", action="store_true", help="autocast to bfloat16 (CPUs with it)")
    train.add_argument(
        "--export",
        action="store_true",
        help="also export the reader to int8 ONNX and choose its floor on the kept-out cases",
    )
    evaluate_ = commands.add_parser("evaluate")
    evaluate_.add_argument("--out", required=True)
    evaluate_.add_argument("--corpus", action="append")
    evaluate_.add_argument(
        "--reader", help="a checkpoint to score instead of DIR/reader.pt (DIR/evaluation-NAME.json)"
    )
    evaluate_.add_argument("--blind", action="append", default=[])
    evaluate_.add_argument(
        "--flags", action="store_true", help="also the flags head on the kept-out stated fields"
    )
    evaluate_.add_argument(
        "--current",
        action="store_true",
        help="also read the same lines with the shipped heads' field reader",
    )
    evaluate_.add_argument(
        "--no-reader",
        action="store_true",
        help="the shipped field reader only (with --current); no reader.pt",
    )
    export_ = commands.add_parser("export")
    export_.add_argument(
        "--reader", required=True, help="a one-pass reader's checkpoint, or an exported .onnx"
    )
    export_.add_argument("--sha256", help="an exported file's pin (required for a .onnx)")
    export_.add_argument("--out", required=True)
    for command in (train, evaluate_):
        command.add_argument("--tokenizer", default=str(TOKENIZER))
        command.add_argument("--max-tokens", type=int, default=0, help="0: 128 a line, 96 a pair")
        command.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.command == "train":
        _check_train(args)
    if args.command == "export" and args.reader.endswith(".onnx") and not args.sha256:
        raise SystemExit("export: give the .onnx file's --sha256")
    {"train": _train, "evaluate": _evaluate, "export": _export}[args.command](args)


if __name__ == "__main__":
    main()
