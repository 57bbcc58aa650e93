"""`--qa-reader FILE --qa-reader-sha256 HEX --qa-reader-floors F L H`: the blind sets scored
with a QA reader file of one's own (a retrained candidate beside the shipped file, ADR 0146),
through the product's own settings for a deployment's file (`qa_reader_path` and its pin and
floors), so that the candidate is read exactly as a deployment would read it; and
`--value-fit-file FILE --value-fit-sha256 HEX`, a value-fit head's file read the same way.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class QaReaderFile:
    """A reader file, its pinned SHA-256 and its three floors (held None: the floor)."""

    path: Path
    sha256: str
    floor: float
    list_floor: float
    held_floor: float | None

    def settings(self) -> dict[str, Any]:
        """The learned extractor's settings that read this file in place of the shipped one."""
        return {
            "field_reader": "qa_reader",
            "qa_reader_path": self.path,
            "qa_reader_sha256": self.sha256,
            "qa_reader_floor": self.floor,
            "qa_reader_list_floor": self.list_floor,
            "qa_reader_held_floor": self.held_floor,
        }

    def described(self) -> dict[str, Any]:
        return {
            "file": self.path.name,
            "sha256": self.sha256,
            "floors": [self.floor, self.list_floor, self.held_floor],
        }


def add_qa_reader_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--qa-reader", type=Path, help="a QA reader int8 file of one's own (default: the shipped)"
    )
    parser.add_argument("--qa-reader-sha256", help="its pin, required with --qa-reader")
    parser.add_argument(
        "--qa-reader-floors",
        type=float,
        nargs=3,
        metavar=("FLOOR", "LIST", "HELD"),
        help="its floor, list floor and held floor (a negative held floor: none, read at the "
        "floor), required with --qa-reader",
    )


def qa_reader_file(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> QaReaderFile | None:
    """The file the options name, or None; refuses a file without its pin and floors."""
    if args.qa_reader is None:
        if args.qa_reader_sha256 is not None or args.qa_reader_floors is not None:
            parser.error("--qa-reader-sha256, --qa-reader-floors: only with --qa-reader")
        return None
    if args.extractor != "learned":
        parser.error("--qa-reader: only with --extractor learned")
    if args.qa_reader_sha256 is None or args.qa_reader_floors is None:
        parser.error("--qa-reader: needs --qa-reader-sha256 and --qa-reader-floors")
    floor, list_floor, held = args.qa_reader_floors
    return QaReaderFile(
        args.qa_reader, args.qa_reader_sha256, floor, list_floor, held if held >= 0 else None
    )


def add_value_fit_file_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--value-fit-file",
        type=Path,
        help="a value-fit head of the lab's fit in place of the packaged one, with "
        "--value-fit-sha256 (`python -m factledger.bench.judgement.value_fit`)",
    )
    parser.add_argument("--value-fit-sha256", help="the value-fit file's pin")


def value_fit_file_of(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> tuple[Path, str] | None:
    """The value-fit file the options name and its pin, or None; refuses a file without it."""
    if args.value_fit_file is None:
        return None
    if args.value_fit_sha256 is None:
        parser.error("--value-fit-sha256: required with --value-fit-file")
    return args.value_fit_file, args.value_fit_sha256
