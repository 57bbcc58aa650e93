"""The blind-set scorer's `--qa-reader` options: a reader file of one's own, read through the
product's settings for a deployment's file, refused without its pin and floors."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from factledger.api.settings.extraction import LearnedExtractorSettings
from factledger.bench.evalsets.reader_file import add_qa_reader_options, qa_reader_file

PIN = "ab" * 32


def _parse(*argv: str) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--extractor", default="learned")
    add_qa_reader_options(parser)
    return parser.parse_args(argv), parser


def test_a_file_with_its_pin_and_floors_becomes_the_products_deployment_settings() -> None:
    args, parser = _parse(
        "--qa-reader", "r.onnx", "--qa-reader-sha256", PIN, "--qa-reader-floors", "6", "7.5", "5"
    )
    chosen = qa_reader_file(args, parser)
    assert chosen is not None
    settings = LearnedExtractorSettings.model_validate(chosen.settings())
    assert settings.qa_reader_path == Path("r.onnx")
    assert settings.qa_reader_sha256 == PIN
    assert (settings.qa_reader_floor, settings.qa_reader_list_floor) == (6.0, 7.5)
    assert settings.qa_reader_held_floor == 5.0


def test_a_negative_held_floor_reads_held_fields_at_the_floor() -> None:
    args, parser = _parse(
        "--qa-reader", "r.onnx", "--qa-reader-sha256", PIN, "--qa-reader-floors", "6", "7", "-1"
    )
    chosen = qa_reader_file(args, parser)
    assert chosen is not None
    assert chosen.held_floor is None


def test_no_file_leaves_the_shipped_reader() -> None:
    args, parser = _parse()
    assert qa_reader_file(args, parser) is None


@pytest.mark.parametrize(
    "argv",
    [
        ("--qa-reader", "r.onnx", "--qa-reader-floors", "6", "7", "5"),
        ("--qa-reader", "r.onnx", "--qa-reader-sha256", PIN),
        ("--qa-reader-sha256", PIN),
        ("--extractor", "rule", "--qa-reader", "r.onnx", "--qa-reader-sha256", PIN,
         "--qa-reader-floors", "6", "7", "5"),
    ],
)  # fmt: skip
def test_a_file_without_its_pin_or_floors_or_outside_the_learned_extractor_is_refused(
    argv: tuple[str, ...],
) -> None:
    args, parser = _parse(*argv)
    with pytest.raises(SystemExit):
        qa_reader_file(args, parser)
