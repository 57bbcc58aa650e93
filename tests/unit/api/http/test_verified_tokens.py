"""Verified tokens are remembered by hash until they expire: the same answer as a fresh
verification, never a refusal remembered, never a token kept past its `exp`."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from pydantic import SecretStr

from factledger.api.http.auth import Role, SubjectClaim, TokenRequest, TokenVerifier, mint_token
from factledger.api.http.errors import AuthenticationError
from factledger.api.http.token_cache import VerifiedTokens
from factledger.api.settings import AuthSettings, JwtKeySettings

SETTINGS = AuthSettings(
    issuer="platform",
    audience="factledger",
    keys=(JwtKeySettings(kid="k1", algorithm="HS256", secret=SecretStr("s" * 40)),),
)
LEAD = SubjectClaim(kind="lead", ref="crm-17")


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def token(ttl: timedelta = timedelta(minutes=10)) -> str:
    return mint_token(SETTINGS, TokenRequest(Role.AGENT, "t1", "agent-7", LEAD, ttl))


def test_a_second_verification_is_answered_from_the_cache() -> None:
    verifier = TokenVerifier(SETTINGS)
    raw = token()
    first = verifier.verify(raw)
    verifier._keys.clear()  # a fresh verification would now fail: the cache must answer
    assert verifier.verify(raw) == first


def test_a_refused_token_is_not_remembered() -> None:
    verifier = TokenVerifier(SETTINGS)
    forged = token()[:-4] + "AAAA"
    for _ in range(2):
        with pytest.raises(AuthenticationError):
            verifier.verify(forged)
    assert verifier._verified.get(forged) is None


def test_an_entry_ends_at_the_tokens_expiry() -> None:
    clock = FakeClock()
    cache: VerifiedTokens[str] = VerifiedTokens(ttl_s=60, clock=clock)
    cache.put("t", "principal", expires_at=clock.now + 5)
    assert cache.get("t") == "principal"
    clock.now += 5
    assert cache.get("t") is None


def test_an_entry_ends_after_the_ttl_even_for_a_long_lived_token() -> None:
    clock = FakeClock()
    cache: VerifiedTokens[str] = VerifiedTokens(ttl_s=60, clock=clock)
    cache.put("t", "principal", expires_at=clock.now + 3600)
    clock.now += 60
    assert cache.get("t") is None


def test_an_expired_token_is_refused_although_it_was_verified_before() -> None:
    clock = FakeClock()
    verifier = TokenVerifier(SETTINGS, clock=clock)
    raw = token(ttl=timedelta(seconds=30))
    verifier.verify(raw)
    clock.now += 31
    verifier._keys.clear()  # no fresh verification can pass: only a stale entry could
    with pytest.raises(AuthenticationError):
        verifier.verify(raw)


def test_the_cache_is_bounded() -> None:
    clock = FakeClock()
    cache: VerifiedTokens[int] = VerifiedTokens(max_entries=3, clock=clock)
    for n in range(5):
        cache.put(f"t{n}", n, expires_at=clock.now + 60)
    assert [cache.get(f"t{n}") for n in range(5)] == [None, None, 2, 3, 4]


def test_expired_entries_make_room_before_any_live_one_goes() -> None:
    clock = FakeClock()
    cache: VerifiedTokens[int] = VerifiedTokens(max_entries=3, clock=clock)
    cache.put("short", 0, expires_at=clock.now + 5)
    cache.put("long-1", 1, expires_at=clock.now + 60)
    cache.put("long-2", 2, expires_at=clock.now + 60)
    clock.now += 5
    cache.put("new", 3, expires_at=clock.now + 60)
    # The expired entry went, not the least recently used live one; none is held past its time.
    assert len(cache) == 3
    assert [cache.get(t) for t in ("long-1", "long-2", "new")] == [1, 2, 3]


def test_a_token_already_expired_is_not_kept() -> None:
    clock = FakeClock()
    cache: VerifiedTokens[int] = VerifiedTokens(clock=clock)
    cache.put("gone", 0, expires_at=clock.now - 1)
    assert len(cache) == 0
