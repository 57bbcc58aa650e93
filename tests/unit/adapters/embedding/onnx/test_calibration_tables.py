"""Calibration tables: the packaged ones are found offline by model sha256, a user's model gets
its own with `factledger-lab embedder calibrate`, and a model without one stays on raw cosine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import structlog
from typer.testing import CliRunner

from factledger.adapters.embedding.onnx.calibration_tables import (
    OWN_PAIRS,
    PACKAGED_TABLES,
    TABLE_FILE,
    calibration_for,
    file_sha256,
    packaged_tables,
    read_pairs,
    read_table,
    table_entry,
    write_table,
)
from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles, OnnxPreset
from factledger.application.memory.calibration import Calibration
from factledger.bench.cli.main import app


def test_every_packaged_model_has_a_rising_table_in_the_package() -> None:
    tables = packaged_tables()
    for preset in OnnxPreset:
        files = OnnxModelFiles.preset(preset)
        calibration = calibration_for(files)
        assert calibration is not None
        assert calibration == tables[files.model_sha256 or ""]
        assert calibration.slope > 0
    # The file says what 0.55 meant when it was fitted, and on which pairs.
    body = json.loads(PACKAGED_TABLES.read_text())
    assert body["threshold"] == 0.55
    assert all("held_out" in entry for entry in body["tables"].values())


def test_a_written_table_reads_back_for_the_same_model(tmp_path: Path) -> None:
    calibration = Calibration(slope=7.5, intercept=-2.25)
    write_table(tmp_path, "ab" * 32, table_entry(calibration, model_id="mine"))
    assert read_table(tmp_path) == ("ab" * 32, calibration)


def test_our_own_pairs_hold_both_classes_and_no_keyword_paraphrases() -> None:
    pairs = read_pairs(OWN_PAIRS)
    assert {p.relevant for p in pairs} == {True, False}
    assert "Who do they buy from these days?" in {p.question for p in pairs if p.relevant}


def own_model_dir(tmp_path: Path) -> Path:
    files = OnnxModelFiles.preset(OnnxPreset.PARAPHRASE_MINILM_L3)
    directory = tmp_path / "my-model"
    directory.mkdir()
    shutil.copyfile(files.model, directory / "model.onnx")
    shutil.copyfile(files.tokenizer, directory / "tokenizer.json")
    return directory


def test_a_model_without_a_table_is_uncalibrated_and_says_so(tmp_path: Path) -> None:
    directory = own_model_dir(tmp_path)
    (directory / "model.onnx").write_bytes(b"not the packaged model")
    with structlog.testing.capture_logs() as logs:
        assert calibration_for(OnnxModelFiles.from_directory(directory)) is None
    assert [e["event"] for e in logs] == ["embedding.uncalibrated"]


def test_calibrate_writes_a_table_for_a_users_model_that_is_then_found(tmp_path: Path) -> None:
    directory = own_model_dir(tmp_path)  # a copy of a packaged model: its own fit goes first
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(OWN_PAIRS.read_text())
    result = CliRunner().invoke(
        app, ["embedder", "calibrate", "--model-dir", str(directory), "--pairs", str(pairs)]
    )
    assert result.exit_code == 0, result.output
    assert "relevance 0.55 at raw cosine" in result.output
    sha256, calibration = read_table(directory) or ("", None)
    assert sha256 == file_sha256(directory / "model.onnx")
    assert calibration is not None
    assert calibration_for(OnnxModelFiles.from_directory(directory)) == calibration
    # fitted on our own pairs alone, so not the packaged table
    assert calibration != calibration_for(OnnxModelFiles.preset(OnnxPreset.PARAPHRASE_MINILM_L3))
    assert (directory / TABLE_FILE).is_file()
