"""The queue bench's "before" page (`--before inline`): the product's queue page with the rows
as they were before ADR 0091, each quoting row's evidence in context in the page, served in
front of the product's own route; the groups view stays the product's."""

from __future__ import annotations

from support.api_harness import TEST_AUTH, asgi_client, build_ports
from support.console_seed import seed_queue, sign_in

from factledger.api.console.app import create_app
from factledger.api.settings import RateLimitSettings
from factledger.bench.review_queue.inline import evidence_inline
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import INTENT_QUOTE


async def test_the_before_page_renders_each_quoting_rows_evidence_into_the_page() -> None:
    clock = ManualClock()
    ports = build_ports(clock)
    seeded = seed_queue(ports, clock)
    app = create_app(ports=ports, auth=TEST_AUTH, rate_limit=RateLimitSettings(enabled=False))
    async with asgi_client(evidence_inline(app)) as web:
        await sign_in(web)
        page = (await web.get("/console/queue")).text
        groups = (await web.get("/console/queue?view=groups")).text

    quoting = len(seeded.changes) - 1  # every seeded change quotes what was said but the inference
    assert page.count('<ol class="transcript"') == quoting
    assert f"<mark>{INTENT_QUOTE}</mark>" in page
    assert all(f'id="pick-{change}"' in page for change in seeded.changes.values())  # as it was
    assert page.count("queue.js") == 1  # the page's script once: at its end, not deferred
    assert "<script defer" not in page
    assert 'class="queue groups"' in groups
