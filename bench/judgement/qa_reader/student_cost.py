"""`python -m factledger.bench.judgement.qa_reader.student_cost`: the shipped reader's pass and
student readers' (`student.py`, untrained: a graph's cost is its shape's) side by side on the
same sessions, interleaved, process CPU per session (ADR 0131, stage 1).

Two sets of sessions: the sync bench's (its eight lines, the lead's fields, the numbers
changing from session to session) and the blind dev halves' (their domains' fields). Each
student is exported to int8 ONNX exactly as a trained one would be, then read through the
lab's student reader (`line_reader.py`), tokenising and decoding included, as the shipped
reader is through the product's adapter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tokenizers import Tokenizer

from factledger.adapters.embedding.onnx.model_files import TOKENIZER
from factledger.adapters.judgement.qa_reader.reader import LineRead, QaFieldReader
from factledger.application.proposals.schema import DEFAULT_LEAD
from factledger.bench.judgement.qa_reader.line_reader import LineFieldReader
from factledger.bench.judgement.qa_reader.sessions import blind_sessions
from factledger.bench.judgement.qa_reader.student import untrained
from factledger.bench.judgement.qa_reader.student_export import INT8_FILE, export
from factledger.bench.machine import load_average
from factledger.bench.write.sync import SAID

LEAD_FIELDS = tuple(f.field for f in DEFAULT_LEAD.fields)
LEAD_LISTS = frozenset(f.field for f in DEFAULT_LEAD.fields if f.type.value == "list")
Session = tuple[list[LineRead], tuple[str, ...], frozenset[str]]
WARM_UP = 3


def bench_sessions(count: int) -> list[Session]:
    return [
        ([LineRead(i, s.format(n=n), "") for i, s in enumerate(SAID)], LEAD_FIELDS, LEAD_LISTS)
        for n in range(7, 7 + count)
    ]


def dev_sessions(directories: Sequence[Path]) -> list[Session]:
    out: list[Session] = []
    for d in directories:
        sessions, _ = blind_sessions(d)
        for s in sessions:
            lines = [
                LineRead(i, text, s.lines[i - 1][1] if i and s.lines[i - 1][0] == "agent" else "")
                for i, (role, text) in enumerate(s.lines)
                if role == "subject" and text.strip()
            ]
            if lines:
                lists = frozenset(f for f, is_list in s.lists.items() if is_list)
                out.append((lines, s.fields, lists))
    return out


Read = Callable[[Session], object]


def time_interleaved(readers: dict[str, Read], sessions: Sequence[Session]) -> dict[str, float]:
    """Mean process CPU ms per session of each reader, the readers taking turns per session."""
    for s in sessions[:WARM_UP]:
        for read in readers.values():
            read(s)
    spent: dict[str, list[float]] = {name: [] for name in readers}
    for s in sessions[WARM_UP:]:
        for name, read in readers.items():
            cpu = time.process_time()
            read(s)
            spent[name].append((time.process_time() - cpu) * 1000)
    return {name: statistics.fmean(ms) for name, ms in spent.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="student_cost")
    parser.add_argument("--layers", type=int, nargs="+", default=[6, 4, 3, 2, 1])
    parser.add_argument("--student", type=Path, nargs="*", default=[], help="trained int8 files")
    parser.add_argument("--bench-sessions", type=int, default=60)
    parser.add_argument("--dev", type=Path, nargs="*", default=[])
    args = parser.parse_args(argv)
    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    shipped = QaFieldReader.packaged()
    readers: dict[str, Read] = {"shipped": lambda s: shipped.answers_sync(s[0], s[1], s[2])}

    def student_read(student: LineFieldReader) -> Read:
        return lambda s: student.answers_sync(s[0], s[1], s[2])

    with tempfile.TemporaryDirectory() as scratch:
        files = {f"trained {p.name}": p for p in args.student}
        for layers in args.layers:
            out = Path(scratch) / f"l{layers}"
            export(untrained(layers), out)
            files[f"student, {layers} layers"] = out / INT8_FILE
        for name, path in files.items():
            readers[name] = student_read(LineFieldReader(path.read_bytes(), 5.5, 6.0, tokenizer))
        figures: dict[str, object] = {"load_before": load_average()}
        sets = {"bench": bench_sessions(args.bench_sessions)}
        if args.dev:
            sets["blind dev"] = dev_sessions(args.dev)
        for set_name, sessions in sets.items():
            ms = time_interleaved(readers, sessions)
            figures[set_name] = {
                name: {"cpu_ms_a_session": round(v, 2), "of_shipped": round(v / ms["shipped"], 3)}
                for name, v in ms.items()
            }
        figures["load_after"] = load_average()
    json.dump(figures, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
