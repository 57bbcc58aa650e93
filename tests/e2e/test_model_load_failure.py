"""A model that loads after ready and failed to load (its file missing here) costs a clear
answer, never a 500: a request that needs it is answered 503 with `Retry-After`, naming no path,
and once the file is back (and the pause after the failure has passed) the same request is
served (ADR 0182)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import httpx
import pytest
from support.api_harness import TEST_AUTH, asgi_client, build_ports, line
from support.api_steps import AGENT, a_lead

from factledger.adapters import deferred_load
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.embedding.recent_vectors import RecentVectors
from factledger.adapters.embedding.use_multilingual import UseMultilingualEmbedder, resources_dir
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS, PACKAGED_HEADS_SHA256, LearnedJudge
from factledger.api.bootstrap import judgement as judgement_bootstrap
from factledger.api.http.app import create_app
from factledger.testing.manual_clock import ManualClock


async def a_session(http: httpx.AsyncClient) -> str:
    """A lead with a session open; the session's messages' URL."""
    await a_lead(http)
    start = {"session_id": "wa-1", "channel": "whatsapp"}
    created = await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)
    assert created.status_code == 201, created.text
    return "/v1/subjects/me/sessions/wa-1/messages"


async def test_a_message_that_needs_a_model_whose_load_failed_is_answered_503_until_it_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deferred_load, "RETRY_AFTER_S", 0.0)  # the next caller loads again
    preset = OnnxModelFiles.preset(DEFAULT_PRESET)
    model = tmp_path / "model.onnx"  # the packaged model, not there yet
    embedder = OnnxEmbedder(dataclasses.replace(preset, model=model), load_in_background=True)
    judge = LearnedJudge(embedder, Heads.load(PACKAGED_HEADS, PACKAGED_HEADS_SHA256))
    ports = build_ports(ManualClock(), judge=judge)
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH)) as http:
        url = await a_session(http)
        message = {"role": "agent", "text": "Which supplier do you work with now?"}

        refused = await http.post(url, json=message, headers=AGENT)

        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"]
        assert refused.json()["error"] == "ModelUnavailableError"
        assert str(tmp_path) not in refused.text
        shutil.copy(preset.model, model)  # the file is back
        served = await http.post(url, json=message, headers=AGENT)
        assert served.status_code in {200, 201}, served.text


async def test_a_message_screened_while_the_multilingual_encoder_cannot_load_is_answered_503(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The secret screen and the instruction screen read every message over the multilingual
    encoder (ADRs 0185, 0201): while its files cannot be read the message is refused 503
    (never kept unscreened, never a 500), and served once they are back."""
    monkeypatch.setattr(deferred_load, "RETRY_AFTER_S", 0.0)
    encoder = UseMultilingualEmbedder(tmp_path, load_in_background=True)  # no files yet
    monkeypatch.setattr(judgement_bootstrap, "screens_encoder", lambda: RecentVectors(encoder))
    async with asgi_client(create_app(ports=build_ports(ManualClock()), auth=TEST_AUTH)) as http:
        url = await a_session(http)
        message = {"role": "subject", "text": "Der Code für das Gartentor ist 7731."}

        refused = await http.post(**line(url, message, AGENT))

        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "ModelUnavailableError"
        assert str(tmp_path) not in refused.text
        assert "7731" not in (await http.get(url, headers=AGENT)).text
        for name in ("weights.npz", "sp.model"):
            shutil.copy(resources_dir() / name, tmp_path / name)
        served = await http.post(**line(url, message, AGENT))
        assert served.status_code == 200, served.text
        assert served.json()["kept"] is False  # screened, and withheld
