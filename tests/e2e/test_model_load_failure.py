"""A model that loads after ready and failed to load (its file missing here) costs a clear
answer, never a 500: a request that needs it is answered 503 with `Retry-After`, naming no path,
and once the file is back (and the pause after the failure has passed) the same request is
served (ADR 0182)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
from support.api_harness import TEST_AUTH, asgi_client, build_ports
from support.api_steps import AGENT, a_lead

from factledger.adapters import deferred_load
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import DEFAULT_PRESET, OnnxModelFiles
from factledger.adapters.judgement.heads import Heads
from factledger.adapters.judgement.judge import PACKAGED_HEADS, PACKAGED_HEADS_SHA256, LearnedJudge
from factledger.api.http.app import create_app
from factledger.testing.manual_clock import ManualClock


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
        await a_lead(http)
        start = {"session_id": "wa-1", "channel": "whatsapp"}
        created = await http.post("/v1/subjects/me/sessions", json=start, headers=AGENT)
        assert created.status_code == 201, created.text
        url = "/v1/subjects/me/sessions/wa-1/messages"
        message = {"role": "agent", "text": "Which supplier do you work with now?"}

        refused = await http.post(url, json=message, headers=AGENT)

        assert refused.status_code == 503, refused.text
        assert refused.headers["Retry-After"]
        assert refused.json()["error"] == "ModelUnavailableError"
        assert str(tmp_path) not in refused.text
        shutil.copy(preset.model, model)  # the file is back
        served = await http.post(url, json=message, headers=AGENT)
        assert served.status_code in {200, 201}, served.text
