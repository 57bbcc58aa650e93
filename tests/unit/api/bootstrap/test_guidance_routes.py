"""`FACTLEDGER_EXTRACTION__GUIDANCE` -> the guidance catalogue sessions are checked against."""

from __future__ import annotations

import pytest

from factledger.api.bootstrap.guidance import guidance_catalogue
from factledger.api.settings import SettingsError, load_settings
from factledger.application.memory.extraction import ExtractionContext
from factledger.application.memory.guidance_catalogue import GuidanceCatalogueError


def test_routes_come_from_the_environment_beside_the_packaged_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTION__GUIDANCE",
        '[{"tenant": "acme", "conversation_type": "onboarding", "guidance": "acme.yaml"},'
        ' {"channel": "voice", "guidance": "support_ticket"}]',
    )
    catalogue = guidance_catalogue(load_settings())
    assert catalogue.conversation_types("acme") == {
        "onboarding",
        "sales_discovery",
        "support_ticket",
    }
    assert catalogue.conversation_types("globex") == {"sales_discovery", "support_ticket"}
    assert catalogue.choose(ExtractionContext(channel="voice")) == "support_ticket"
    assert catalogue.choose(ExtractionContext("acme", conversation_type="onboarding")) == (
        "acme.yaml"
    )


def test_a_bad_route_is_named_without_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTION__GUIDANCE",
        '[{"conversation_type": "Secret Type!", "guidance": "x.yaml"}]',
    )
    with pytest.raises(SettingsError) as raised:
        load_settings()
    assert "extraction.guidance" in str(raised.value)
    assert "Secret" not in str(raised.value)


def test_two_routes_with_the_same_parts_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "FACTLEDGER_EXTRACTION__GUIDANCE",
        '[{"tenant": "acme", "guidance": "a.yaml"}, {"tenant": "acme", "guidance": "b.yaml"}]',
    )
    with pytest.raises(GuidanceCatalogueError):
        guidance_catalogue(load_settings())
