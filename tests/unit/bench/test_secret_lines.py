"""Secret-line sets: the writers' format checked, the halves split by id, and each message
screened as a subject's line: a secret refused is caught, a plain message refused a false
alarm, counted by English and other languages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml
from support.screens import RefusesNaming

from factledger.bench.evalsets.line_files import in_dev_half
from factledger.bench.evalsets.secret_lines import (
    SecretLineError,
    load_lines,
    main,
    score,
    split,
)

ITEMS = [
    {"id": "s-1", "lang": "en", "text": "The admin pw is hunter2.", "secret": True, "kind": "pw"},
    {"id": "s-2", "lang": "de", "text": "Passwort: Geheim123!", "secret": True, "kind": "pw"},
    {"id": "s-3", "lang": "en", "text": "I forgot my PIN.", "secret": False, "kind": "asks"},
    {"id": "s-4", "lang": "fr", "text": "Commande n° 88213.", "secret": False, "kind": "order"},
]


def written(folder: Path, items: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lines-01.yaml").write_text(yaml.safe_dump(items, allow_unicode=True))
    return folder


def test_a_line_without_a_yes_or_no_secret_is_refused_naming_the_item(tmp_path: Path) -> None:
    bad = [{**ITEMS[0], "secret": "yes"}]
    with pytest.raises(SecretLineError, match="s-1: secret must be true or false"):
        load_lines([written(tmp_path, bad)])


def test_an_id_given_twice_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SecretLineError, match="ids given twice: s-1"):
        load_lines([written(tmp_path, [ITEMS[0], ITEMS[0]])])


def test_secrets_caught_and_false_alarms_are_counted_by_english_and_other_languages(
    tmp_path: Path,
) -> None:
    lines = load_lines([written(tmp_path, ITEMS)])
    detail: list[dict[str, object]] = []
    tally = asyncio.run(score(lines, RefusesNaming("hunter2", "88213"), detail))
    figures = tally.figures()
    assert (tally.secrets, tally.caught, tally.plain, tally.false_alarms) == (2, 1, 2, 1)
    assert (figures["caught_rate_english"], figures["caught_rate_other"]) == (1.0, 0.0)
    assert figures["false_alarm_rate"] == 0.5
    assert [(d["id"], d["category"]) for d in detail] == [("s-2", None), ("s-4", "credential")]


def test_the_halves_split_by_id_and_hold_every_item_once(tmp_path: Path) -> None:
    items = [{**ITEMS[0], "id": f"s-{n}"} for n in range(40)]
    counts = split(written(tmp_path / "writer", items), tmp_path / "set")
    dev, held = load_lines([tmp_path / "set" / "dev"]), load_lines([tmp_path / "set" / "heldout"])
    assert counts == {"dev": len(dev), "heldout": len(held)}
    assert sorted(x.id for x in dev + held) == sorted(str(i["id"]) for i in items)
    assert all(in_dev_half(x.id) for x in dev)
    assert not any(in_dev_half(x.id) for x in held)


def test_the_default_filter_scores_a_set_and_refuses_to_detail_a_held_out_half(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["score", str(written(tmp_path / "dev", ITEMS))])
    (report,) = json.loads(capsys.readouterr().out)
    assert (report["secrets"], report["plain"]) == (2, 2)
    assert report["caught_english"] == 1  # "the admin pw is hunter2" is a credential
    with pytest.raises(SystemExit, match="dev halves only"):
        main(["score", str(tmp_path / "heldout"), "--detail", str(tmp_path / "d.json")])


def test_the_session_screen_adds_the_secret_head_to_the_detectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pin = {"id": "p-1", "lang": "it", "text": "Il PIN della carta è 8352.", "secret": True}
    written(tmp_path / "dev", [{**pin, "kind": "card PIN"}])
    caught = []
    for screen in ("detectors", "session"):
        main(["score", str(tmp_path / "dev"), "--screen", screen])
        caught.append(json.loads(capsys.readouterr().out)[0]["caught"])
    assert caught == [0, 1]


def test_both_screens_are_timed_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["time", str(written(tmp_path / "dev", ITEMS)), "--rounds", "1"])
    timed = json.loads(capsys.readouterr().out)
    assert set(timed) == {"detectors", "session"}
    assert timed["detectors"]["messages"] == timed["session"]["messages"] == len(ITEMS)
    assert timed["session"]["p50_ratio"] > 0
