"""The write slots with a share per tenant: a tenant holding its share waits for one of its
own and then hears 429; other tenants keep the rest; slots come back however a write ends."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

import pytest
from support.api_harness import TEST_AUTH

from factledger.api.http.app import create_app
from factledger.api.http.errors import RateLimitedError, ServerBusyError
from factledger.api.http.overload import WriteLimiter
from factledger.api.settings import Settings
from factledger.api.settings.access import ApiSettings


async def test_a_tenant_holds_at_most_its_share_and_others_keep_the_rest() -> None:
    limiter = WriteLimiter(limit=4, wait_s=0.05, tenant_share=0.5)
    assert limiter.tenant_limit == 2
    async with AsyncExitStack() as held:
        for _ in range(2):
            await held.enter_async_context(limiter.slot("t1"))
        with pytest.raises(RateLimitedError):
            async with limiter.slot("t1"):
                pass
        async with limiter.slot("t2"), limiter.slot("t2"):
            assert (limiter.held_by("t1"), limiter.held_by("t2")) == (2, 2)
            with pytest.raises(ServerBusyError):  # every slot of the process is taken
                async with limiter.slot("t3"):
                    pass
    assert (limiter.held_by("t1"), limiter.held_by("t2"), limiter.held_by("t3")) == (0, 0, 0)


async def test_a_waiting_write_gets_the_tenants_slot_when_one_is_given_back() -> None:
    limiter = WriteLimiter(limit=4, wait_s=5.0, tenant_share=0.25)
    first_done, first_held = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        async with limiter.slot("t1"):
            first_held.set()
            await first_done.wait()

    holder = asyncio.create_task(first())
    await first_held.wait()
    waiter = asyncio.create_task(_one_write(limiter, "t1"))
    await asyncio.sleep(0)
    assert not waiter.done()
    first_done.set()
    await asyncio.wait_for(asyncio.gather(holder, waiter), 5.0)
    assert limiter.held_by("t1") == 0


async def test_a_failed_write_gives_its_slots_back() -> None:
    limiter = WriteLimiter(limit=2, wait_s=0.05, tenant_share=0.5)
    with pytest.raises(ValueError, match="boom"):
        async with limiter.slot("t1"):
            raise ValueError("boom")
    await _one_write(limiter, "t1")


async def _one_write(limiter: WriteLimiter, tenant: str) -> None:
    async with limiter.slot(tenant):
        pass


def test_a_deployment_of_one_named_tenant_gives_it_every_slot() -> None:
    settings = Settings(api=ApiSettings(max_concurrent_writes=6, tenant_write_share=0.5))
    one = create_app(settings, auth=TEST_AUTH.model_copy(update={"tenants": ("acme",)}))
    several = create_app(settings, auth=TEST_AUTH.model_copy(update={"tenants": ("acme", "b")}))
    assert one.state.api.writes.tenant_limit == 6
    assert several.state.api.writes.tenant_limit == 3
