"""`python -m factledger.bench.judgement.usem.blas_threads`: the packaged multilingual
encoder with NumPy's BLAS on two threads and on one (ADR 0189), side by side in one run on
this machine: one sentence (mean of 200) and 64 sentences (mean of 10), each setting twice,
interleaved."""

from __future__ import annotations

import sys
import time

from threadpoolctl import threadpool_limits

from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder

ONE = ["We moved to Supplier Basalt last month because of delivery delays."]
BATCH = [
    f"Sentence {i}: we moved to Supplier Basalt last month because of delays." for i in range(64)
]
ROUNDS = ((ONE, 200), (BATCH, 10))


def main(rounds: tuple[tuple[list[str], int], ...] = ROUNDS) -> None:
    embedder = UseMultilingualEmbedder().load()
    sys.stdout.write("blas threads | texts | ms per call\n")
    for threads in (2, 1, 2, 1):
        threadpool_limits(threads, user_api="blas")
        for texts, calls in rounds:
            embedder.embed_sync(texts)
            started = time.perf_counter()
            for _ in range(calls):
                embedder.embed_sync(texts)
            ms = (time.perf_counter() - started) / calls * 1000
            sys.stdout.write(f"{threads} | {len(texts)} | {ms:.2f}\n")


if __name__ == "__main__":
    main()
