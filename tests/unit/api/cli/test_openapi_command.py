"""`factledger openapi` prints the document the server serves at `/openapi.json`, or writes it
to a file, without opening a ledger."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
from typer.testing import CliRunner

from factledger.api.cli.main import app
from factledger.api.cli.serve import create_served_app


async def served_document() -> object:
    """`/openapi.json` of the app `factledger serve` runs (its routes load when first asked)."""
    transport = httpx.ASGITransport(app=create_served_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        return (await http.get("/openapi.json")).json()


def test_openapi_prints_the_served_document(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["openapi"], env={"FACTLEDGER_DATA_DIR": str(tmp_path)})
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document == asyncio.run(served_document())
    assert "/v1/subjects/{subject}/recall" in document["paths"]
    assert list(tmp_path.iterdir()) == []  # nothing opened, nothing written


def test_openapi_writes_a_stable_file(tmp_path: Path) -> None:
    texts = []
    for name in ("first.json", "second.json"):
        result = CliRunner().invoke(app, ["openapi", "--output", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
        texts.append((tmp_path / name).read_text(encoding="utf-8"))
    assert texts[0] == texts[1]
    assert texts[0].endswith("}\n")
    assert json.loads(texts[0])["openapi"].startswith("3.")
