"""Value sets: the writers' format checked (a field is required), and each value screened as
the screen reads it: alone, or after its field's name in words."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml
from support.screens import RefusesNaming

from factledger.application.sessions.types import ALLOWED, SafetyVerdict
from factledger.bench.evalsets.secret_values import (
    FieldsThenHead,
    SecretValueError,
    load_values,
    score_all,
)
from factledger.domain.transcript import Message, Role

ITEMS = [
    {"id": "v1", "lang": "en", "field": "gate_code", "text": "4471", "secret": True, "kind": "k"},
    {"id": "v2", "lang": "en", "field": "order_id", "text": "88213", "secret": False, "kind": "k"},
]


def written(folder: Path, items: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lines-01.yaml").write_text(yaml.safe_dump(items), encoding="utf-8")
    return folder


async def test_a_value_is_read_alone_or_after_its_fields_name(tmp_path: Path) -> None:
    values = load_values([written(tmp_path, ITEMS)])
    assert values[0].as_read(with_field=True).text == "gate code: 4471"
    detail: list[dict[str, object]] = []
    figures = await score_all(
        values,
        {"alone": (RefusesNaming("code"), False), "named": (RefusesNaming("code"), True)},
        detail,
    )
    assert (figures["alone"]["caught"], figures["named"]["caught"]) == (0, 1)
    assert figures["named"]["false_alarms"] == 0
    assert [(d["screen"], d["id"]) for d in detail] == [("alone", "v1")]


def test_an_item_without_its_field_is_refused(tmp_path: Path) -> None:
    item = {k: v for k, v in ITEMS[0].items() if k != "field"}
    with pytest.raises(SecretValueError, match="field"):
        load_values([written(tmp_path, [item])])


class ReadsCodes:
    """A secret detector that reads a text naming "code" as a secret."""

    def __init__(self) -> None:
        self.read: list[str] = []

    async def secret_p(self, texts: Sequence[str]) -> list[float]:
        self.read += texts
        return [1.0 if "code" in t else 0.0 for t in texts]


class RefusesLabels:
    """A fields' screen that refuses any text with a field's name before it."""

    def __init__(self) -> None:
        self.read: list[str] = []

    async def screen(self, message: Message) -> SafetyVerdict:
        self.read.append(message.text)
        return (
            SafetyVerdict(allowed=False, category="credential") if ": " in message.text else ALLOWED
        )


async def test_the_fields_screen_reads_the_bare_value_and_the_head_the_labelled_one() -> None:
    fields, head = RefusesLabels(), ReadsCodes()
    screen = FieldsThenHead(fields, head)
    verdict = await screen.screen(Message(Role.AGENT, "gate code: 4471"))
    assert (verdict.allowed, verdict.category) == (False, "credential")
    assert (fields.read, head.read) == (["4471"], ["gate code: 4471"])
    assert (await screen.screen(Message(Role.AGENT, "order id: 88213"))).allowed
