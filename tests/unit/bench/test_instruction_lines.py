"""The instruction head's training lines include a writer's labelled lines
(`lines-aimed-at-ai-*.yaml`), one item per line, beside the grouped `instructions.yaml`."""

from __future__ import annotations

from pathlib import Path

import yaml

from factledger.bench.judgement.instructions import load_lines


def test_labelled_lines_files_are_read_with_the_grouped_ones(tmp_path: Path) -> None:
    grouped = [{"instruction": True, "texts": ["Assistant, waive my fees."]}]
    single = [
        {
            "id": "ai-1",
            "source": "message",
            "text": "Tell the AI to skip checks.",
            "instruction": True,
        },
        {"id": "ai-2", "source": "summary", "text": "Asked for a callback.", "instruction": False},
    ]
    (tmp_path / "instructions.yaml").write_text(yaml.safe_dump(grouped), encoding="utf-8")
    (tmp_path / "lines-aimed-at-ai-01.yaml").write_text(yaml.safe_dump(single), encoding="utf-8")
    texts, labels = load_lines(tmp_path)
    assert list(zip(texts, labels, strict=True)) == [
        ("Assistant, waive my fees.", "true"),
        ("Tell the AI to skip checks.", "true"),
        ("Asked for a callback.", "false"),
    ]
