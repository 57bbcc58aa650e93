"""The console's signed cookies: the session a platform token opens, and the sign-in nonce.

- Signed by itsdangerous (`URLSafeSerializer`, HMAC-SHA256): the payload is compact JSON,
  base64url, and the signature's salt is the cookie's purpose, so a sign-in cookie never
  passes for a session and a changed byte is a cookie that is not there.
- Keys rotate: the newest signs, and cookies signed with a previous key (setting
  `previous_session_secrets`) still read, so a new secret signs nobody out.
- A session holds the principal the token named (id, tenant, role), when it ends (never later
  than the token itself) and its CSRF token; never the token.
- Reading refuses a session past its end (`exp`, in the signed payload: the end is the
  token's, not a fixed age from signing).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from itsdangerous import BadData, URLSafeSerializer

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


class CookieSigner:
    """Signs and reads the console's cookies (see the module docstring); `key` signs, and
    `previous` keys are still accepted when reading."""

    def __init__(self, key: bytes, *, previous: Sequence[bytes] = ()) -> None:
        keys = [*previous, key]  # itsdangerous signs with the last and accepts any
        self._serializers = {
            purpose: URLSafeSerializer(
                keys,
                salt=f"factledger.console.{purpose}",
                signer_kwargs={"digest_method": hashlib.sha256},
            )
            for purpose in (_SESSION, _SIGN_IN)
        }

    def _sign(self, purpose: str, body: dict[str, Any]) -> str:
        signed: str = self._serializers[purpose].dumps(body)
        return signed

    def _read(self, purpose: str, value: str | None, now: float) -> dict[str, Any] | None:
        if not value:
            return None
        try:
            body = self._serializers[purpose].loads(value)
        except BadData:
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
