"""`python -m factledger.bench.judgement.qa_reader.batching --plan PLAN MODULE [ARGS...]`: runs
a lab command (`factledger.bench.evalsets`, `...qa_reader.floor`, `...evalsets.cost`) with
the QA reader's windows batched by another plan than the product's (ADR 0155), so that a
build before the change and a candidate are scored from one tree, by the same commands.

Plans: `padded16` (the product's: sorted by length, 16 to a run, padded to the longest),
`alone` (each window in a run of its own), `same-length` (up to 16 windows of exactly the
same number of tokens to a run: no padding, one activation range), `shuffled16` (16 to a run
in a seeded random order).
`--float-activations`: the graph's quantised products run in float on the file's weights
dequantised at load (`float_activations`).
"""

from __future__ import annotations

import argparse
import random
import runpy
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence

from factledger.adapters.judgement.qa_reader import reader
from factledger.bench.judgement.qa_reader.float_activations import float_activations

RUN = reader.BATCH


def same_length_batches(lengths: Sequence[int]) -> list[list[int]]:
    """Up to `RUN` windows of exactly the same number of tokens to a batch."""
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, n in enumerate(lengths):
        by_length[n].append(i)
    return [
        group[b : b + RUN]
        for _, group in sorted(by_length.items())
        for b in range(0, len(group), RUN)
    ]


def shuffled_batches(lengths: Sequence[int], seed: int = 28) -> list[list[int]]:
    """`RUN` to a batch in a seeded random order: the base's own noise, each line batched
    with other lines than the product batches it with (as `same_reader --batch-noise`)."""
    order = list(range(len(lengths)))
    random.Random(seed).shuffle(order)
    return [order[b : b + RUN] for b in range(0, len(order), RUN)]


PLANS: dict[str, Callable[[Sequence[int]], list[list[int]]]] = {
    "alone": reader.windows_alone,
    "padded16": reader.sorted_batches,
    "same-length": same_length_batches,
    "shuffled16": shuffled_batches,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.judgement.qa_reader.batching")
    parser.add_argument("--plan", choices=sorted(PLANS), required=True)
    parser.add_argument(
        "--float-activations",
        action="store_true",
        help="the graph's quantised products in float, their weights dequantised at load",
    )
    parser.add_argument("module", help="the lab command's module, run as __main__")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    args = parser.parse_args(argv)
    reader.window_batches = PLANS[args.plan]
    if args.float_activations:
        reader.session_graph = float_activations
    sys.argv = [args.module, *args.args]
    runpy.run_module(args.module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
