"""`python -m factledger.bench.judgement train --corpus DIR [--corpus DIR ...] --out FILE`
`python -m factledger.bench.judgement forget --onto FILE [--corpus DIR ...] --out FILE` (the
forget flag alone refitted on every labelled sentence and training conversation, set into the
heads file FILE whose other heads stay as they are: ADR 0135; `--lines PATH` adds writers'
labelled messages, ADR 0165)
`python -m factledger.bench.judgement instructions [--corpus DIR] [--encoder minilm|use]
[--out FILE]` (the instruction head, `bench/judgement/instructions.py`; `--encoder use` over
the packaged multilingual encoder, ADR 0201's second head; `--weighing --conversations DIR`
the weighing of the two shipped heads' readings, ADR 0204)
`python -m factledger.bench.judgement secrets [--corpus DIR ...] [--leave-out DIR ...] [--out FILE]`
(the secret head, `bench/judgement/secrets.py`: ADR 0185)
`python -m factledger.bench.judgement answers [--corpus DIR ...] [--out FILE]` (the pair
answer head and its yes threshold, `bench/judgement/answers.py`: the shipped file by default)
`python -m factledger.bench.judgement cross --base MODEL.safetensors [--corpus DIR ...] --out DIR`
(the answer cross-encoder, every layer fine-tuned in torch, exported to ONNX int8:
`bench/judgement/cross/train.py`; needs `pip install torch==2.13.0`)
`python -m factledger.bench.judgement tune-use [--corpus DIR ...] [--files GLOB ...] [--out FILE]
[--seeds N] [--jobs N]` (the multilingual encoder's upper layers fine-tuned with a pair head,
one run per seed, read in numpy by the product: `bench/judgement/usem/train.py`; needs torch
too; ADR 0105;
`--files` names which labelled files of the corpora it reads, ADR 0109; `--cross` reads the
pair as a cross-encoder, ADR 0117; `--jobs N` trains N seeds at once in processes, ADR 0133;
`--points N` reads the kept-out pairs N times an epoch, each a point the file may be taken at,
and `--learning-rate` / `--head-learning-rate` set the encoder's and the head's rates, ADR 0136)

Fits the judgement heads over the packaged embedder on one or more corpora (the packaged
one by default): `sentences.yaml` and `answers.yaml` for the sentence and reply heads,
labelled conversations in the blind sets' format (`cases-*.yaml`, with `answers-*.yaml`)
for the field head and more replies; `--conversations DIR` adds conversations that train the
field head only; prints each head's cross-validated accuracy and the
file's SHA-256 to pin
(`FACTLEDGER_EXTRACTOR__HEADS_SHA256`, or `PACKAGED_HEADS_SHA256` for the shipped file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.instructions import (
    PACKAGED_INSTRUCTION_HEAD,
    BothEncodersInstructionDetector,
)
from factledger.adapters.judgement.judge import PACKAGED_HEADS
from factledger.adapters.judgement.pair_answers import PACKAGED_ANSWER_HEAD
from factledger.adapters.judgement.secrets import PACKAGED_SECRET_HEAD
from factledger.adapters.judgement.tuned_use import PACKAGED_TUNED_ANSWERS
from factledger.application.memory.ports import Embedder
from factledger.bench.judgement.answers import train_answer_head
from factledger.bench.judgement.conversations import labelled
from factledger.bench.judgement.corpus import PACKAGED_CORPUS
from factledger.bench.judgement.field_data import cases_in
from factledger.bench.judgement.forget_flag import forget_sentences, with_refit_forget_flag
from factledger.bench.judgement.importing import import_conversations, import_replies
from factledger.bench.judgement.instructions import fit_weighing, train_instruction_head
from factledger.bench.judgement.secrets import PACKAGED_SECRET_LINES, train_secret_head
from factledger.bench.judgement.train import (
    FIELD_FOLDS,
    FORGET_FOLDS,
    cross_validate,
    train,
)


async def _train(corpora: list[Path], conversations: list[Path], out: Path) -> dict[str, object]:
    corpus, loaded = labelled(corpora)
    cases = cases_in([*corpora, *conversations])
    embedder = OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))
    heads = await train(embedder, corpus, cases, loaded.cases)
    accuracy = await cross_validate(embedder, corpus)
    sha256 = heads.save(out)
    return {
        "sentences": len(corpus.sentences),
        "replies": len(corpus.replies),
        "conversations": len(cases),
        "span_conversations": len(loaded.cases),
        "span_labels_dropped": dict(loaded.dropped),
        "field_min": heads.field_min,
        "field_out_of_fold": FIELD_FOLDS,
        "forget_min": heads.forget_min,
        "forget_out_of_fold": FORGET_FOLDS,
        "cross_validated_accuracy": accuracy,
        "out": str(out),
        "sha256": sha256,
    }


async def _refit_forget(
    corpora: list[Path], onto: Path, out: Path, lines: list[Path]
) -> dict[str, object]:
    corpus, loaded, from_lines = forget_sentences(corpora, lines)
    embedder = OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))
    heads = await with_refit_forget_flag(embedder, corpus, Heads.load(onto, None))
    return {
        "sentences": len(corpus.sentences),
        "requests": sum(s.forget for s in corpus.sentences),
        "span_conversations": len(loaded.cases),
        "line_sentences": from_lines,
        "forget_min": heads.forget_min,
        "forget_out_of_fold": FORGET_FOLDS,
        "onto": str(onto),
        "out": str(out),
        "sha256": heads.save(out),
    }


def _tune_use(args: argparse.Namespace) -> dict[str, object]:
    from factledger.bench.judgement.answers import PAIR_FILES
    from factledger.bench.judgement.usem.train import TuneRecipe, train_tuned_use

    recipe = TuneRecipe(
        tune=args.layers,
        epochs=args.epochs,
        compound=args.compound,
        minutes=args.minutes,
        cross=args.cross,
        label_smoothing=args.label_smoothing,
        learning_rate=args.learning_rate,
        head_learning_rate=args.head_learning_rate,
        points=args.points,
    )
    seeds = range(1, args.seeds + 1)
    files = args.files or PAIR_FILES
    return train_tuned_use(
        args.corpus or [PACKAGED_CORPUS], args.out, recipe, seeds, files, args.jobs, args.also_at
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement")
    commands = parser.add_subparsers(dest="command", required=True)
    fit = commands.add_parser("train", help="fit the heads on labelled corpora")
    fit.add_argument("--corpus", type=Path, action="append", help="a corpus directory")
    fit.add_argument(
        "--conversations",
        type=Path,
        action="append",
        default=[],
        help="a directory of labelled conversations (cases-*.yaml) that trains the field head "
        "only (its replies train nothing)",
    )
    fit.add_argument("--out", type=Path, default=PACKAGED_HEADS)
    flag = commands.add_parser(
        "forget", help="refit the forget flag alone into a heads file (its other heads kept)"
    )
    flag.add_argument("--corpus", type=Path, action="append", help="a corpus directory")
    flag.add_argument("--onto", type=Path, default=PACKAGED_HEADS, help="the heads file to keep")
    flag.add_argument("--out", type=Path, required=True)
    flag.add_argument(
        "--lines",
        type=Path,
        action="append",
        default=[],
        help="a writer's labelled messages (a lines-*.yaml file or a directory of them, "
        "bench.evalsets.forget_lines): their sentences train the flag (ADR 0165)",
    )
    importing = commands.add_parser(
        "import", help="copy a writer's labelled conversations into the corpus, validated"
    )
    importing.add_argument("source", type=Path)
    importing.add_argument("--into", type=Path, required=True)
    lines = commands.add_parser("instructions", help="fit the instruction head")
    lines.add_argument("--corpus", type=Path, default=PACKAGED_CORPUS)
    lines.add_argument("--out", type=Path, default=PACKAGED_INSTRUCTION_HEAD)
    lines.add_argument(
        "--conversations",
        type=Path,
        action="append",
        default=[],
        help="a writer's labelled conversations: its subject lines as lines that do not "
        "instruct (ADR 0161)",
    )
    lines.add_argument(
        "--withhold-at-most",
        type=float,
        help="lower the head's bias until at most this share of the conversations' subject "
        "lines reads as an instruction out of fold (ADR 0161's candidate two)",
    )
    lines.add_argument(
        "--as-pieces",
        action="store_true",
        help="the conversations' lines split into the pieces the screen judges (ADR 0161's "
        "candidate five)",
    )
    lines.add_argument(
        "--weighing",
        action="store_true",
        help="fit the weighing of the shipped heads' log-odds, its bias lowered to withhold no "
        "more of --conversations' lines than their mean (ADR 0204), instead of a head",
    )
    lines.add_argument(
        "--encoder",
        choices=("minilm", "use"),
        default="minilm",
        help="the vectors the head reads: the heads' sentence encoder, or the packaged "
        "multilingual encoder (ADR 0201's second head)",
    )
    secrets = commands.add_parser("secrets", help="fit the secret head (ADR 0185)")
    secrets.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a directory of labelled messages (lines-*.yaml); the packaged one by default",
    )
    secrets.add_argument(
        "--leave-out",
        type=Path,
        action="append",
        default=[],
        help="an evaluation set's directory: its messages' texts train nothing",
    )
    secrets.add_argument(
        "--conversations",
        type=Path,
        action="append",
        default=[],
        help="a writer's labelled conversations: its subject lines as messages that disclose "
        "no secret",
    )
    secrets.add_argument(
        "--as-pieces",
        action="store_true",
        help="the conversations' lines split into the pieces the screen reads",
    )
    secrets.add_argument(
        "--values",
        type=Path,
        action="append",
        default=[],
        help="labelled proposal values (lines-*.yaml with a field): a head for values, each "
        "read as 'field name: value' (ADR 0188)",
    )
    secrets.add_argument("--l2", type=float, help="the penalty (default: the message head's)")
    secrets.add_argument("--out", type=Path, default=PACKAGED_SECRET_HEAD)
    replies = commands.add_parser(
        "answers", help="fit the pair answer head (yes / no / neither to a question)"
    )
    replies.add_argument(
        "--corpus", type=Path, action="append", help="a directory of labelled replies"
    )
    replies.add_argument("--out", type=Path, default=PACKAGED_ANSWER_HEAD)
    replies_import = commands.add_parser(
        "import-replies", help="copy a writer's labelled replies into the corpus, validated"
    )
    replies_import.add_argument("source", type=Path)
    replies_import.add_argument("--into", type=Path, default=PACKAGED_CORPUS)
    cross = commands.add_parser(
        "cross", help="fine-tune the answer cross-encoder (torch) and export it to ONNX"
    )
    cross.add_argument(
        "--corpus", type=Path, action="append", help="a directory of labelled replies"
    )
    cross.add_argument(
        "--base", type=Path, required=True, help="all-MiniLM-L6-v2's model.safetensors"
    )
    cross.add_argument("--out", type=Path, required=True, help="a directory for the files")
    cross.add_argument("--epochs", type=int, default=4)
    cross.add_argument("--minutes", type=float, default=60.0)
    cross.add_argument("--learning-rate", type=float, default=5e-5)
    tune = commands.add_parser(
        "tune-use", help="fine-tune the multilingual encoder's upper layers on replies (torch)"
    )
    tune.add_argument("--corpus", type=Path, action="append", help="a directory of replies")
    tune.add_argument("--out", type=Path, default=PACKAGED_TUNED_ANSWERS)
    tune.add_argument("--seeds", type=int, default=3, help="runs whose readings are averaged")
    tune.add_argument("--epochs", type=int, default=6)
    tune.add_argument("--layers", choices=("all", "dan"), default="all")
    tune.add_argument("--compound", type=float, default=0.5)
    tune.add_argument("--minutes", type=float, default=30.0, help="per run")
    tune.add_argument("--label-smoothing", type=float, default=0.0)
    tune.add_argument(
        "--learning-rate", type=float, default=5e-5, help="the encoder's layers' rate"
    )
    tune.add_argument("--head-learning-rate", type=float, default=2e-3)
    tune.add_argument(
        "--points",
        type=int,
        default=1,
        help="kept-out readings per epoch, each a point the file may be taken at (ADR 0136)",
    )
    tune.add_argument(
        "--jobs", type=int, default=1, help="runs trained at once, one process each (same file)"
    )
    tune.add_argument(
        "--also-at",
        type=int,
        action="append",
        default=[],
        metavar="EPOCHS",
        help="also write the file the same runs give cut at EPOCHS (FILE.epochsN.npz)",
    )
    tune.add_argument(
        "--cross",
        action="store_true",
        help="read as a cross-encoder: each side's tokens attend to the other's (ADR 0117)",
    )
    tune.add_argument(
        "--files",
        action="append",
        help="which labelled files of the corpora (a glob; default every replies-*.yaml and "
        "answers-*.yaml)",
    )
    args = parser.parse_args(argv)
    if args.command == "tune-use":
        sys.stdout.write(json.dumps(_tune_use(args), indent=2) + "\n")
        return
    if args.command == "cross":
        from factledger.bench.judgement.cross.train import Recipe, train_cross_encoder

        recipe = Recipe(epochs=args.epochs, minutes=args.minutes, learning_rate=args.learning_rate)
        done = train_cross_encoder(args.corpus or [PACKAGED_CORPUS], args.base, args.out, recipe)
        sys.stdout.write(json.dumps(done, indent=2) + "\n")
        return
    if args.command == "forget":
        done = asyncio.run(
            _refit_forget(args.corpus or [PACKAGED_CORPUS], args.onto, args.out, args.lines)
        )
        sys.stdout.write(json.dumps(done, indent=2) + "\n")
        return
    if args.command == "import-replies":
        report = import_replies(args.source, args.into)
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    if args.command == "import":
        report = import_conversations(args.source, args.into)
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    if args.command == "answers":
        encoder = UseMultilingualEmbedder().load()
        directories = args.corpus or [PACKAGED_CORPUS]
        done = asyncio.run(train_answer_head(encoder, directories, args.out))
        sys.stdout.write(json.dumps(done, indent=2) + "\n")
        return
    if args.command == "instructions" and args.weighing:
        english = OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))
        screen = BothEncodersInstructionDetector.packaged(english)
        fitted = fit_weighing(
            english, UseMultilingualEmbedder().load(), args.corpus, args.conversations, screen
        )
        sys.stdout.write(json.dumps(asyncio.run(fitted), indent=2) + "\n")
        return
    if args.command == "instructions":
        embedder: Embedder = (
            UseMultilingualEmbedder().load()
            if args.encoder == "use"
            else OnnxEmbedder(OnnxModelFiles.preset(DEFAULT_PRESET))
        )
        done = asyncio.run(
            train_instruction_head(
                embedder,
                args.corpus,
                args.out,
                args.conversations,
                args.withhold_at_most,
                as_pieces=args.as_pieces,
            )
        )
        sys.stdout.write(json.dumps(done, indent=2) + "\n")
        return
    if args.command == "secrets":
        corpora = args.corpus or [PACKAGED_SECRET_LINES]
        done = asyncio.run(
            train_secret_head(
                UseMultilingualEmbedder().load(),
                corpora,
                args.out,
                args.leave_out,
                args.conversations,
                as_pieces=args.as_pieces,
                values=args.values,
                l2=args.l2,
            )
        )
        sys.stdout.write(json.dumps(done, indent=2) + "\n")
        return
    corpora = args.corpus or [PACKAGED_CORPUS]
    result = asyncio.run(_train(corpora, args.conversations, args.out))
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
