"""Calibration pairs from a LoCoMo-shaped file: evidence facts relevant, others not, names
made "they", whole conversations held out; and the bench report's calibration section."""

from __future__ import annotations

import json
from pathlib import Path

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.application.memory.calibration import Calibration
from factledger.bench.calibration import calibrate_model, held_out, locomo_pairs, render
from factledger.bench.config import BenchConfig
from factledger.bench.main import calibration_figures
from factledger.bench.report.markdown import calibration_section

FACTS = [
    ["Ana adopted a dog named Biscuit.", "D1:1"],
    ["Ana's sister lives in Porto.", "D1:2"],
    ["Ben runs a bakery in Lyon.", ["D1:3"]],
    ["Ben is training for a marathon.", "D1:4"],
    ["Ana works night shifts as a nurse.", "D1:5"],
    ["Ana speaks French and Spanish.", "D1:6"],
]


def conversation(sample_id: str) -> dict[str, object]:
    return {
        "sample_id": sample_id,
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben"},
        "observation": {"session_1_observation": {"Ana": FACTS[:2] + FACTS[4:], "Ben": FACTS[2:4]}},
        "qa": [
            {"question": "What is Ana's dog called?", "evidence": ["D1:1"], "category": 1},
            {"question": "Where is Ben's bakery?", "evidence": ["D1:3"], "category": 4},
            {"question": "What did Ana never say?", "evidence": [], "category": 5},
        ],
    }


def locomo_file(tmp_path: Path, conversations: int = 4) -> Path:
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([conversation(f"conv-{n}") for n in range(conversations)]))
    return path


def test_evidence_facts_are_relevant_and_names_become_they(tmp_path: Path) -> None:
    pairs = locomo_pairs(locomo_file(tmp_path, conversations=1))
    relevant = [(p.question, p.fact) for p in pairs if p.relevant]
    assert relevant == [
        ("What is their dog called?", "they adopted a dog named Biscuit."),
        ("Where is their bakery?", "they runs a bakery in Lyon."),
    ]
    irrelevant = [p for p in pairs if not p.relevant]
    assert len(irrelevant) == 2 * 4  # four drawn per question; the adversarial one is skipped
    assert all("Ana" not in p.question + p.fact and "Ben" not in p.fact for p in pairs)


def test_the_last_conversations_are_held_out_whole(tmp_path: Path) -> None:
    pairs = locomo_pairs(locomo_file(tmp_path, conversations=5))
    assert held_out(pairs) >= {"conv-2", "conv-3", "conv-4"}
    assert not held_out(pairs) & {"conv-0", "conv-1"}


async def test_the_bench_report_carries_the_calibration_before_and_after(tmp_path: Path) -> None:
    config = BenchConfig(locomo=locomo_file(tmp_path, conversations=5), out_dir=tmp_path)
    calibration = await calibration_figures(config, HashingEmbedder(dimension=512))
    assert calibration is not None
    assert calibration["slope"] > 0
    assert set(calibration["before"]) == set(calibration["after"])
    assert calibration["before"]["LoCoMo held out"]["pairs"] == 3 * 10
    section = "\n".join(calibration_section(calibration))
    assert "## Calibrated relevance" in section
    assert "before: P / R" in section
    smoke = BenchConfig(locomo=config.locomo, smoke=True)
    assert await calibration_figures(smoke, HashingEmbedder(dimension=512)) is None


async def test_the_packaged_table_is_measured_on_todays_scores_beside_the_refit(
    tmp_path: Path,
) -> None:
    pairs = locomo_pairs(locomo_file(tmp_path, conversations=5))
    in_use = Calibration(slope=8.0, intercept=-3.0)

    result = await calibrate_model(HashingEmbedder(dimension=512), pairs, packaged=in_use)

    assert result.packaged == in_use
    assert set(result.packaged_figures) == set(result.calibrated)
    report = render([result])
    assert "packaged table: P / R" in report
    assert f"({in_use.raw_at(0.55):.3f})" in report
