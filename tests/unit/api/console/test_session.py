"""The console's signed cookies: sessions and sign-in nonces read back only as signed, and
still read after the key is rotated."""

from __future__ import annotations

from factledger.api.console.session import CookieSigner
from factledger.api.http.auth import Principal, Role

NOW = 1_800_000_000.0
REVIEWER = Principal("reviewer-3", "acme", Role.REVIEWER)


def test_a_session_reads_back_until_it_ends() -> None:
    signer = CookieSigner(b"k" * 32)
    value, opened = signer.open_session(REVIEWER, expires_at=int(NOW) + 60)
    assert signer.read_session(value, now=NOW) == opened
    assert opened.principal == REVIEWER
    assert signer.read_session(value, now=NOW + 61) is None


def test_a_changed_byte_or_another_key_is_no_session() -> None:
    signer = CookieSigner(b"k" * 32)
    value, _ = signer.open_session(REVIEWER, expires_at=int(NOW) + 60)
    for at in (3, len(value) // 2, len(value) - 2):
        changed = value[:at] + ("A" if value[at] != "A" else "B") + value[at + 1 :]
        assert signer.read_session(changed, now=NOW) is None
    assert CookieSigner(b"o" * 32).read_session(value, now=NOW) is None
    assert signer.read_session("garbage", now=NOW) is None
    assert signer.read_session("\u00e9t\u00e9.\u00e9t\u00e9", now=NOW) is None
    assert signer.read_session(None, now=NOW) is None


def test_a_sign_in_cookie_never_passes_for_a_session_nor_the_reverse() -> None:
    signer = CookieSigner(b"k" * 32)
    cookie, nonce = signer.sign_in_nonce(now=NOW)
    assert signer.read_sign_in_nonce(cookie, now=NOW) == nonce
    assert signer.read_session(cookie, now=NOW) is None
    session, _ = signer.open_session(REVIEWER, expires_at=int(NOW) + 60)
    assert signer.read_sign_in_nonce(session, now=NOW) is None


def test_each_session_gets_its_own_csrf_token() -> None:
    signer = CookieSigner(b"k" * 32)
    _, first = signer.open_session(REVIEWER, expires_at=int(NOW) + 60)
    _, second = signer.open_session(REVIEWER, expires_at=int(NOW) + 60)
    assert first.csrf != second.csrf
    assert len(first.csrf) >= 32


def test_a_cookie_signed_with_a_previous_key_still_reads_after_a_rotation() -> None:
    old, new = b"o" * 32, b"n" * 32
    before, opened = CookieSigner(old).open_session(REVIEWER, expires_at=int(NOW) + 60)
    rotated = CookieSigner(new, previous=[old])
    assert rotated.read_session(before, now=NOW) == opened
    after, _ = rotated.open_session(REVIEWER, expires_at=int(NOW) + 60)
    # New cookies are signed with the new key alone: the old key does not read them.
    assert CookieSigner(old).read_session(after, now=NOW) is None
    assert CookieSigner(new).read_session(after, now=NOW) is not None
    # Once the old key is dropped, what it signed is no session.
    assert CookieSigner(new).read_session(before, now=NOW) is None
