"""Which guidance a context gets: the most specific matching route, else the default."""

from __future__ import annotations

import pytest

from factledger.application.memory.extraction import ExtractionContext
from factledger.application.memory.guidance_catalogue import (
    DEFAULT_GUIDANCE,
    GuidanceCatalogue,
    GuidanceCatalogueError,
    GuidanceRoute,
    UnknownConversationTypeError,
)

CATALOGUE = GuidanceCatalogue(
    (
        GuidanceRoute("sales", conversation_type="sales_discovery"),
        GuidanceRoute("acme_sales", tenant="acme", conversation_type="sales_discovery"),
        GuidanceRoute("acme", tenant="acme"),
        GuidanceRoute("patients", subject_kind="patient"),
        GuidanceRoute("voice", channel="voice"),
        GuidanceRoute("onboarding", tenant="globex", conversation_type="onboarding"),
    )
)


def ctx(**parts: str) -> ExtractionContext:
    return ExtractionContext(**parts)


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        (ctx(), DEFAULT_GUIDANCE),
        (ctx(tenant="initech", subject_kind="lead", channel="chat"), DEFAULT_GUIDANCE),
        (ctx(tenant="initech", conversation_type="sales_discovery"), "sales"),
        (ctx(tenant="acme", conversation_type="sales_discovery"), "acme_sales"),
        (ctx(tenant="acme"), "acme"),
        # one part each: the conversation type outranks the tenant, the kind the channel
        (ctx(tenant="acme", subject_kind="patient"), "patients"),
        (ctx(subject_kind="patient", channel="voice"), "patients"),
        (ctx(tenant="acme", channel="voice"), "voice"),
        (ctx(tenant="initech", conversation_type="onboarding"), DEFAULT_GUIDANCE),
    ],
)
def test_the_most_specific_matching_route_wins(context: ExtractionContext, expected: str) -> None:
    assert CATALOGUE.choose(context) == expected


def test_a_tenant_knows_the_conversation_types_of_routes_that_apply_to_it() -> None:
    assert CATALOGUE.conversation_types("globex") == {"sales_discovery", "onboarding"}
    assert CATALOGUE.conversation_types("acme") == {"sales_discovery"}
    assert CATALOGUE.check_known("globex", "onboarding") == "onboarding"
    with pytest.raises(UnknownConversationTypeError) as raised:
        CATALOGUE.check_known("acme", "onboarding")
    assert raised.value.field == "conversation_type"
    with pytest.raises(UnknownConversationTypeError):
        CATALOGUE.check_known("acme", "Sales Discovery")


def test_two_routes_selecting_the_same_parts_are_refused() -> None:
    with pytest.raises(GuidanceCatalogueError):
        GuidanceCatalogue((GuidanceRoute("a", tenant="t"), GuidanceRoute("b", tenant="t")))


def test_a_configured_route_replaces_the_built_in_one_with_its_selector() -> None:
    built_in = (GuidanceRoute("support_ticket", conversation_type="support_ticket"),)
    mine = (GuidanceRoute("ours.yaml", conversation_type="support_ticket"),)
    merged = GuidanceCatalogue.merged(built_in, mine)
    assert merged.choose(ctx(conversation_type="support_ticket")) == "ours.yaml"
    assert GuidanceCatalogue.merged(built_in, ()).choose(ctx(conversation_type="support_ticket"))


def test_a_context_travels_in_metadata_and_back() -> None:
    context = ExtractionContext("acme", "lead", "chat", "sales_discovery")
    assert ExtractionContext.from_metadata(context.to_metadata()) == context
    assert ExtractionContext().to_metadata() == {}
    assert ExtractionContext.from_metadata({"tenant": 3, "session_id": "s"}) == ExtractionContext()
