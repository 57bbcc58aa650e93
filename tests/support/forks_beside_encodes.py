"""A process that encodes on threads while its main thread forks (as the embedded PostgreSQL's
commands are forked when the process runs as root): prints the BLAS threads once the encoder
has loaded, then "forked N" once every fork has returned. `--without-limit` loads the encoder
with the one-thread limit turned off, to show what the limit prevents.

Run as `python -m support.forks_beside_encodes FORKS [--without-limit]`, tests on the path.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from threadpoolctl import threadpool_info

from factledger.adapters.embedding import use_multilingual

TEXTS = [f"Sentence number {i} says something about a supplier and a date." for i in range(24)]
ENCODERS = 3


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(forks: int, *, limited: bool) -> None:
    if not limited:
        use_multilingual.one_blas_thread = lambda: None  # type: ignore[attr-defined]
    embedder = use_multilingual.UseMultilingualEmbedder().load()
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    say(f"blas threads {max(blas)}")
    done = threading.Event()

    def encode() -> None:
        while not done.is_set():
            embedder.embed_sync(TEXTS)

    threads = [threading.Thread(target=encode, daemon=True) for _ in range(ENCODERS)]
    for thread in threads:
        thread.start()
    for _ in range(forks):
        # A pre-exec function makes the standard library fork rather than spawn.
        subprocess.run(["true"], preexec_fn=lambda: None, check=True)  # noqa: S607
    done.set()
    say(f"forked {forks}")


if __name__ == "__main__":
    main(int(sys.argv[1]), limited="--without-limit" not in sys.argv[2:])
