"""`factledger-lab bench --smoke` end to end, on tiny generated stand-ins for the datasets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.postgres_server import PostgresLocation
from factledger.bench import main as bench_main
from factledger.bench.cli.main import app
from factledger.bench.config import BenchConfig, smoke_config
from factledger.bench.progress import Advance, no_progress

SPEAKERS = ("Ana", "Ben")
TOPIC_WORDS = {
    "travel_restaurant": ("restaurant", "dinner", "cuisine"),
    "entertain_shows": ("show", "series", "episode"),
}


def _turn(session: int, turn: int, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "speaker": SPEAKERS[turn % 2],
        "dia_id": f"D{session}:{turn + 1}",
        "text": text,
        **extra,
    }


def write_locomo(path: Path) -> None:
    """Two conversations shaped like locomo10.json, with the README's evidence oddities."""
    conversations = []
    for number, pet in enumerate(("parrot", "tortoise")):
        conversation = {
            "speaker_a": SPEAKERS[0],
            "speaker_b": SPEAKERS[1],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn(1, 0, "Hey Ben! I adopted a " + pet + " last week."),
                _turn(1, 1, "Great news! I started a pottery class on Tuesdays."),
                _turn(1, 2, "I live in Lisbon now.", blip_caption="a photo of a tram"),
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                _turn(2, 0, "My " + pet + " learned to open the cage."),
                _turn(2, 1, "I finished my first pottery bowl in class."),
            ],
        }
        qa = [
            {
                "question": f"What pet did {SPEAKERS[0]} adopt?",
                "answer": pet,
                "evidence": ["D1:1", "D2:1"],
                "category": 4,
            },
            {
                "question": "What class does Ben take?",
                "answer": "pottery",
                "evidence": ["(D1:2); D2:02"],
                "category": 1,
            },
            {
                "question": "Where does Ana live?",
                "answer": "Lisbon",
                "evidence": ["D:1:3"],
                "category": 2,
            },
            {
                "question": "Unanswerable?",
                "adversarial_answer": "x",
                "evidence": ["D1:1"],
                "category": 5,
            },
            {"question": "Nothing valid?", "answer": "x", "evidence": ["D", "D9:9"], "category": 3},
        ]
        conversations.append(
            {"sample_id": f"conv-{number}", "conversation": conversation, "qa": qa}
        )
    path.write_text(json.dumps(conversations), encoding="utf-8")


def write_prefeval(directory: Path) -> None:
    """Two topics of three entries each, shaped like the PrefEval choice-based files."""
    directory.mkdir()
    for topic, words in TOPIC_WORDS.items():
        entries = [
            {
                "preference": f"I only enjoy {word} options that are quiet {index}.",
                "question": f"Can you suggest a {word} for tonight?",
                "explanation": "-",
                "implicit_query": f"Any {word} ideas?",
                "options": ["a", "b", "c", "d"],
                "aligned_op": "a",
                "conversation": {
                    "query": f"Any {word} ideas?",
                    "assistant_options": f"1. A loud {word}. 2. A quiet {word}.",
                    "user_selection": f"The quiet {word} sounds good, not the loud one.",
                    "assistant_acknowledgment": "Got it.",
                },
            }
            for index, word in enumerate(words)
        ]
        (directory / f"{topic}.json").write_text(json.dumps(entries), encoding="utf-8")


@pytest.fixture
def datasets(tmp_path: Path) -> tuple[Path, Path]:
    locomo, prefeval = tmp_path / "locomo.json", tmp_path / "prefeval"
    write_locomo(locomo)
    write_prefeval(prefeval)
    return locomo, prefeval


def check_report(out: Path, backends: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert set(report["backends"]) == set(backends)
    for name in backends:
        result = report["backends"][name]
        assert "errors" not in result, (name, result.get("errors"))
        records = result["locomo"]["records/chunks"]["overall"]
        assert records["n"] == 3  # one conversation: its category-3 question is left without ids
        assert 0.0 <= records["recall@10"] <= 1.0
        assert result["latency"]["recall_samples"] > 0
        if name != "bm25-reference":
            lifecycle = result["lifecycle"]
            assert lifecycle["cross_namespace_queries"] > 0
            assert lifecycle["cross_namespace_leaks"] == 0
            assert lifecycle["forgotten_recalled"] == 0
            assert lifecycle["facts_stored"] > 0
    assert "BM25 reference (README)" in markdown
    assert (out / "locomo_recall.png").stat().st_size > 0
    return report


def test_the_smoke_command_writes_a_full_report(
    datasets: tuple[Path, Path], tmp_path: Path
) -> None:
    locomo, prefeval = datasets
    out = tmp_path / "report"
    backends = ["in-memory", "supermemory-sim", "bm25-reference"]
    result = CliRunner().invoke(
        app,
        [
            "bench",
            "--smoke",
            "--backends",
            ",".join(backends),
            "--locomo",
            str(locomo),
            "--prefeval",
            str(prefeval),
            "--out",
            str(out),
            "--sim-latency",
            "none",
        ],
    )
    assert result.exit_code == 0, result.output
    report = check_report(out, backends)
    assert report["backends"]["supermemory-sim"]["simulated"] is True
    assert "supermemory-sim (SIMULATED)" in (out / "report.md").read_text(encoding="utf-8")
    assert report["meta"]["command"].startswith("factledger-lab bench --backends in-memory,")
    assert report["meta"]["command"].endswith("--smoke")


@pytest.mark.integration
async def test_the_smoke_run_covers_pgvector(
    datasets: tuple[Path, Path], tmp_path: Path, postgres: PostgresLocation
) -> None:
    locomo, prefeval = datasets
    config = smoke_config(
        BenchConfig(
            backends=("pgvector",),
            locomo=locomo,
            prefeval=prefeval,
            out_dir=tmp_path / "report",
            sim_profile="none",
        )
    )

    def start(_: str, __: int) -> Advance:
        return no_progress

    await bench_main.run(config, start, embedder=HashingEmbedder(), postgres=postgres)
    check_report(tmp_path / "report", ["pgvector"])
