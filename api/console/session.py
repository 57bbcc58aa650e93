"""The console's signed cookies: the session a platform token opens, and the sign-in nonce.

- A cookie value is `<payload>.<mac>`: the payload is base64url JSON, the MAC an HMAC-SHA256
  over the cookie's purpose and the payload, so a sign-in cookie never passes for a session
  and a changed byte is a cookie that is not there.
- A session holds the principal the token named (id, tenant, role), when it ends (never later
  than the token itself) and its CSRF token; never the token.
- Reading compares MACs in constant time and refuses a session past its end.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

from factledger.api.http.auth import Principal, Role

SESSION_COOKIE = "factledger_console"
SIGN_IN_COOKIE = "factledger_console_sign_in"
COOKIE_PATH = "/console"
SIGN_IN_TTL_S = 600  # how long a sign-in form stays usable
_SESSION, _SIGN_IN = "session", "sign-in"


@dataclass(frozen=True, slots=True)
class ConsoleSession:
    """A signed-in reviewer, analyst or admin."""

    principal_id: str
    tenant: str
    role: Role
    expires_at: int  # Unix seconds
    csrf: str

    @property
    def principal(self) -> Principal:
        return Principal(self.principal_id, self.tenant, self.role)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CookieSigner:
    """Signs and reads the console's cookies with one key (see the module docstring)."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, purpose: str, payload: str) -> str:
        digest = hmac.new(self._key, f"{purpose}\x1f{payload}".encode(), hashlib.sha256)
        return _b64(digest.digest())

    def _sign(self, purpose: str, body: dict[str, Any]) -> str:
        payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode())
        return f"{payload}.{self._mac(purpose, payload)}"

    def _read(self, purpose: str, value: str | None, now: float) -> dict[str, Any] | None:
        if not value or value.count(".") != 1:
            return None
        payload, mac = value.split(".")
        if not hmac.compare_digest(mac.encode(), self._mac(purpose, payload).encode()):
            return None
        try:
            body = json.loads(_unb64(payload))
        except (ValueError, binascii.Error):
            return None
        if not isinstance(body, dict) or not isinstance(body.get("exp"), int):
            return None
        return body if body["exp"] > now else None

    def open_session(self, principal: Principal, *, expires_at: int) -> tuple[str, ConsoleSession]:
        session = ConsoleSession(
            principal.id, principal.tenant, principal.role, expires_at, secrets.token_urlsafe(32)
        )
        body = {
            "sub": session.principal_id,
            "tenant": session.tenant,
            "role": session.role.value,
            "exp": session.expires_at,
            "csrf": session.csrf,
        }
        return self._sign(_SESSION, body), session

    def read_session(self, value: str | None, *, now: float) -> ConsoleSession | None:
        body = self._read(_SESSION, value, now)
        if body is None:
            return None
        try:
            return ConsoleSession(
                str(body["sub"]), str(body["tenant"]), Role(body["role"]), body["exp"], body["csrf"]
            )
        except (KeyError, ValueError):
            return None

    def sign_in_nonce(self, *, now: float) -> tuple[str, str]:
        """A cookie and the CSRF token the sign-in form carries with it."""
        nonce = secrets.token_urlsafe(32)
        return self._sign(_SIGN_IN, {"nonce": nonce, "exp": int(now) + SIGN_IN_TTL_S}), nonce

    def read_sign_in_nonce(self, value: str | None, *, now: float) -> str | None:
        body = self._read(_SIGN_IN, value, now)
        nonce = None if body is None else body.get("nonce")
        return nonce if isinstance(nonce, str) else None
