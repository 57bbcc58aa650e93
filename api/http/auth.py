"""Identity from the platform: bearer JWTs verified against configured keys.

- The platform (not the conversation) issues tokens. Claims: `iss`, `aud`, `sub` (the agent,
  staff member or service acting), `iat`, `exp`, `tenant`, `role`, and for `agent` tokens
  `subject` = `{"kind": ..., "ref": ...}` or `{"id": ...}`: the one subject the session is about.
- Each configured key has a `kid` and a pinned algorithm (HS256 secret, or RS256 / EdDSA public
  key), so keys rotate by adding a new kid before retiring the old one, and a token can never
  choose its own algorithm (no `alg=none`, no HS256-with-a-public-key confusion).
- Issuer, audience and expiry are verified with a small leeway; lifetimes above the configured
  maximum are refused. Failures raise `AuthenticationError` with a short reason, never the token.
- A token over `max_token_bytes` is refused before any of it is parsed, and the time claims
  (`iat`, `exp`, `nbf`) must be JSON numbers: a numeric string is not a NumericDate.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import jwt
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    ValidationError,
    model_validator,
)

from factledger.api.http.errors import AuthenticationError, PermissionDeniedError
from factledger.api.http.schemas.common import SafeText
from factledger.api.http.schemas.subjects import KIND_PATTERN
from factledger.api.http.token_cache import VerifiedTokens, wall_clock
from factledger.api.settings import TENANT_PATTERN, AuthSettings
from factledger.domain.provenance import MAX_ACTOR_ID
from factledger.domain.subject import MAX_REFERENCE

# RFC 7519's NumericDate: a JSON number (PyJWT alone would also take "1700000000").
NumericDate = StrictInt | StrictFloat


class Role(StrEnum):
    AGENT = "agent"
    REVIEWER = "reviewer"
    ANALYST = "analyst"
    ADMIN = "admin"
    SERVICE = "service"


@dataclass(frozen=True, slots=True)
class SubjectClaim:
    """The subject an agent token is bound to: by kind + external reference, or by id."""

    kind: str | None = None
    ref: str | None = None
    subject_id: str | None = None


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling, as verified from the token."""

    id: str
    tenant: str
    role: Role
    subject: SubjectClaim | None = None
    token_id: str | None = None
    # When the token stops being accepted (unix seconds: `exp` plus the leeway); a response
    # that lasts (a stream) ends there. None: a principal not made from a token (tests, stdio).
    expires_at: float | None = None

    def require(self, *roles: Role) -> None:
        if self.role not in roles:
            raise PermissionDeniedError(f"role {self.role.value} may not do this")


class _SubjectModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    kind: str | None = Field(default=None, pattern=KIND_PATTERN)
    ref: SafeText | None = Field(default=None, min_length=1, max_length=MAX_REFERENCE)
    id: SafeText | None = Field(default=None, min_length=1, max_length=100)

    @model_validator(mode="after")
    def _one_form(self) -> _SubjectModel:
        by_ref = self.kind is not None and self.ref is not None
        if by_ref == (self.id is not None) or (self.kind is None) != (self.ref is None):
            raise ValueError("subject is either {kind, ref} or {id}")
        return self


class _Claims(BaseModel):
    model_config = ConfigDict(extra="ignore")
    sub: SafeText = Field(min_length=1, max_length=MAX_ACTOR_ID)
    tenant: str = Field(pattern=TENANT_PATTERN)
    role: Role
    subject: _SubjectModel | None = None
    iat: NumericDate
    exp: NumericDate
    nbf: NumericDate | None = None
    jti: str | None = None


class TokenVerifier:
    """Verifies bearer tokens against the configured keys and returns the `Principal`."""

    def __init__(self, settings: AuthSettings, *, clock: Callable[[], float] = wall_clock) -> None:
        self._settings = settings
        self._keys: dict[str, tuple[str, Any]] = {}
        for key in settings.keys:
            material: Any
            if key.secret is not None:
                material = key.secret.get_secret_value()
            else:
                assert key.public_key_pem is not None  # noqa: S101 - guaranteed by the validator
                # Parsed once at start-up so a bad PEM fails there, not on the first request.
                try:
                    material = jwt.get_algorithm_by_name(key.algorithm).prepare_key(
                        key.public_key_pem
                    )
                except (ValueError, TypeError, jwt.PyJWTError) as exc:
                    raise ValueError(f"auth key {key.kid}: public_key_pem unreadable") from exc
            self._keys[key.kid] = (key.algorithm, material)
        self._verified: VerifiedTokens[Principal] = VerifiedTokens(clock=clock)

    def verify(self, token: str) -> Principal:
        """The token's principal; a token verified before (and not yet expired) is answered
        from `VerifiedTokens` without parsing it again."""
        if len(token) > self._settings.max_token_bytes:
            raise AuthenticationError("token too large")
        cached = self._verified.get(token)
        if cached is not None:
            return cached
        principal, expires_at = self._verify(token)
        self._verified.put(token, principal, expires_at=expires_at)
        return principal

    def _verify(self, token: str) -> tuple[Principal, float]:
        algorithm, key = self._key_for(token)
        s = self._settings
        try:
            raw = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway_s,
                options={"require": ["exp", "iat", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise AuthenticationError("token expired") from exc
        except jwt.ImmatureSignatureError as exc:
            raise AuthenticationError("token not yet valid") from exc
        except jwt.InvalidSignatureError as exc:
            raise AuthenticationError("token signature invalid") from exc
        except (jwt.InvalidAudienceError, jwt.InvalidIssuerError) as exc:
            raise AuthenticationError("token issuer or audience not accepted") from exc
        except jwt.PyJWTError as exc:
            raise AuthenticationError("token invalid") from exc
        return self._principal(raw), float(raw["exp"])

    def _key_for(self, token: str) -> tuple[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise AuthenticationError("token malformed") from exc
        kid = header.get("kid")
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        if not isinstance(kid, str) or kid not in self._keys:
            raise AuthenticationError("token key unknown")
        return self._keys[kid]

    def _principal(self, raw: dict[str, Any]) -> Principal:
        try:
            claims = _Claims.model_validate(raw)
        except ValidationError as exc:
            # Name the claim, never its value.
            where = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "claims"
            raise AuthenticationError(f"token claim {where} invalid") from None
        if claims.exp - claims.iat > self._settings.max_lifetime_s:
            raise AuthenticationError("token lifetime exceeds the maximum")
        if (claims.role is Role.AGENT) != (claims.subject is not None):
            raise AuthenticationError("token claim subject: required for agents, only for them")
        if self._settings.tenant_refusal(claims.tenant) is not None:
            raise AuthenticationError("token claim tenant: not a tenant of this deployment")
        subject = None
        if claims.subject is not None:
            s = claims.subject
            subject = SubjectClaim(kind=s.kind, ref=s.ref, subject_id=s.id)
        expires_at = float(claims.exp) + self._settings.leeway_s
        return Principal(claims.sub, claims.tenant, claims.role, subject, claims.jti, expires_at)


@dataclass(frozen=True, slots=True)
class TokenRequest:
    """What a development token should say."""

    role: Role
    tenant: str
    principal_id: str
    subject: SubjectClaim | None = None
    ttl: timedelta = timedelta(hours=1)


def mint_token(
    settings: AuthSettings,
    request: TokenRequest,
    *,
    kid: str | None = None,
    private_key_pem: str | None = None,
    now: datetime | None = None,
) -> str:
    """Signs a token as the platform would (development and tests).

    HS256 keys sign with their configured secret; RS256 / EdDSA keys need `private_key_pem`.
    """
    key = next((k for k in settings.keys if kid in (None, k.kid)), None)
    if key is None:
        raise ValueError(f"no key with kid {kid}")
    issued = now or datetime.now(UTC)
    claims: dict[str, Any] = {
        "iss": settings.issuer,
        "aud": settings.audience,
        "sub": request.principal_id,
        "tenant": request.tenant,
        "role": request.role.value,
        "iat": int(issued.timestamp()),
        "exp": int((issued + request.ttl).timestamp()),
        "jti": uuid.uuid4().hex,
    }
    if request.subject is not None:
        s = request.subject
        claims["subject"] = {"id": s.subject_id} if s.subject_id else {"kind": s.kind, "ref": s.ref}
    if key.secret is not None:
        signing: Any = key.secret.get_secret_value()
    elif private_key_pem is not None:
        signing = private_key_pem
    else:
        raise ValueError(f"key {key.kid} ({key.algorithm}) needs a private key to sign")
    return jwt.encode(claims, signing, algorithm=key.algorithm, headers={"kid": key.kid})
