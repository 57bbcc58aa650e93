"""A writer's labelled replies join the corpus only file by file once each parses: a file still
being written, one with a label that is not yes / no / neither, or one that repeats an id
already taken is left out and named. The items are written for this test."""

from __future__ import annotations

from pathlib import Path

import yaml

from factledger.bench.judgement.importing import import_replies


def _item(n: int, label: object, language: str = "en") -> dict[str, object]:
    return {
        "id": f"t-{n}",
        "domain": "gym",
        "change": {"field": "plan", "value": "Off-peak"},
        "question": "You're on the off-peak plan now?",
        "reply": "yes" if label == "yes" else "not really",
        "language": language,
        "label": label,
    }


def test_only_files_that_parse_with_known_labels_and_fresh_ids_are_copied(tmp_path: Path) -> None:
    source, into = tmp_path / "writer", tmp_path / "corpus"
    source.mkdir()
    (source / "replies-d-01.yaml").write_text(
        yaml.safe_dump([_item(1, True), _item(2, "neither", "pt")]), encoding="utf-8"
    )
    (source / "replies-d-02.yaml").write_text("- id: t-3\n  reply: [unfinished", encoding="utf-8")
    (source / "replies-d-03.yaml").write_text(yaml.safe_dump([_item(4, "maybe")]), encoding="utf-8")
    (source / "replies-d-04.yaml").write_text(yaml.safe_dump([_item(1, "no")]), encoding="utf-8")
    report = import_replies(source, into)
    assert report["copied"] == ["replies-d-01.yaml"]
    assert report["not_readable"] == ["replies-d-02.yaml", "replies-d-03.yaml", "replies-d-04.yaml"]
    assert report["labels"] == {"yes": 1, "neither": 1}
    assert report["not_english"] == 1
    assert sorted(p.name for p in into.iterdir()) == ["replies-d-01.yaml"]
