"""Calibration tables of sentence models, found offline next to the model.

- The packaged models' tables ship in `models/calibration/tables.json`, keyed by the model
  file's sha256 (fitted by `factledger-lab bench calibration`; a few numbers each).
- A user's own model directory holds its table in `calibration.json` (written by
  `factledger-lab embedder calibrate`), also keyed by the model's sha256, so a replaced model
  file never inherits the old model's table.
- A model without a table is used uncalibrated (raw cosine), with a warning in the logs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import structlog

from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles
from factledger.application.memory.calibration import Calibration, LabelledPair

log = structlog.get_logger(__name__)

CALIBRATION_DIR = Path(__file__).parent / "models" / "calibration"
PACKAGED_TABLES = CALIBRATION_DIR / "tables.json"
OWN_PAIRS = CALIBRATION_DIR / "own_pairs.jsonl"  # ours, in an agent's wording; free to ship
TABLE_FILE = "calibration.json"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_pairs(path: Path) -> list[LabelledPair]:
    """JSON lines of {"question", "fact", "relevant"[, "group"]}."""
    return list(_pairs(path.read_text(encoding="utf-8").splitlines()))


def _pairs(lines: list[str]) -> Iterator[LabelledPair]:
    for line in lines:
        if line.strip():
            raw = json.loads(line)
            question, fact, group = str(raw["question"]), str(raw["fact"]), raw.get("group", "")
            yield LabelledPair(question, fact, bool(raw["relevant"]), str(group))


def table_entry(calibration: Calibration, **about: object) -> dict[str, object]:
    return {"slope": calibration.slope, "intercept": calibration.intercept, **about}


def _calibration(entry: Mapping[str, object]) -> Calibration:
    slope, intercept = entry["slope"], entry["intercept"]
    if not isinstance(slope, int | float) or not isinstance(intercept, int | float):
        raise ValueError("a calibration table needs numeric slope and intercept")
    return Calibration(float(slope), float(intercept))


def packaged_tables(path: Path = PACKAGED_TABLES) -> dict[str, Calibration]:
    """The packaged models' calibrations by model sha256."""
    tables = json.loads(path.read_text(encoding="utf-8"))["tables"]
    return {sha: _calibration(entry) for sha, entry in tables.items()}


def write_table(directory: Path, sha256: str, entry: Mapping[str, object]) -> Path:
    """Writes a user model's table next to it; returns the file."""
    target = directory / TABLE_FILE
    target.write_text(json.dumps({"model_sha256": sha256, **entry}, indent=2) + "\n", "utf-8")
    return target


def read_table(directory: Path) -> tuple[str, Calibration] | None:
    """A user model directory's table: (the model sha256 it was fitted for, calibration)."""
    source = directory / TABLE_FILE
    if not source.is_file():
        return None
    raw = json.loads(source.read_text(encoding="utf-8"))
    return str(raw["model_sha256"]), _calibration(raw)


def calibration_for(files: OnnxModelFiles) -> Calibration | None:
    """The model's calibration: its directory's table, else the packaged one; None (with a
    warning) when neither matches the model's sha256."""
    sha256 = files.model_sha256 or file_sha256(files.model)
    own = None if files.is_preset else read_table(files.model.parent)
    if own is not None and own[0] == sha256:
        return own[1]  # the user's own fit goes first, even for a copy of a packaged model
    packaged = packaged_tables().get(sha256)
    if packaged is not None:
        return packaged
    log.warning("embedding.uncalibrated", model_id=files.model_id, table_found=own is not None)
    return None
