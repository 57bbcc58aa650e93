"""The lab's side-by-side of the encoder on two BLAS threads and on one prints a row per
setting and batch, both settings twice, and leaves the process on one thread."""

from __future__ import annotations

import pytest
from threadpoolctl import threadpool_info

from factledger.bench.judgement.usem import blas_threads


def test_the_bench_prints_both_settings_twice_and_ends_on_one_thread(
    capsys: pytest.CaptureFixture[str],
) -> None:
    blas_threads.main(((["one sentence"], 2), (["a", "b"], 1)))
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "blas threads | texts | ms per call"
    assert [row.split(" | ")[:2] for row in rows[1:]] == [
        [threads, texts] for threads in "2121" for texts in "12"
    ]
    assert all(float(row.split(" | ")[2]) > 0 for row in rows[1:])
    assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}
