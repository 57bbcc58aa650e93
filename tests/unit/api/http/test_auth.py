"""Token verification: signatures, keys, rotation, claims, lifetimes and placeholder secrets."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from pydantic import SecretStr, ValidationError

from factledger.api.http.auth import (
    Principal,
    Role,
    SubjectClaim,
    TokenRequest,
    TokenVerifier,
    mint_token,
)
from factledger.api.http.errors import AuthenticationError, PermissionDeniedError
from factledger.api.settings import (
    DEV_JWT_SECRET,
    AuthSettings,
    JwtKeySettings,
    SettingsError,
    load_settings,
)

SECRET_A = "a" * 40
SECRET_B = "b" * 40
LEAD = SubjectClaim(kind="lead", ref="crm-17")


def settings(*keys: JwtKeySettings) -> AuthSettings:
    return AuthSettings(issuer="platform", audience="factledger", keys=keys)


def hs(kid: str, secret: str) -> JwtKeySettings:
    return JwtKeySettings(kid=kid, algorithm="HS256", secret=SecretStr(secret))


def agent(subject: SubjectClaim | None = LEAD, **kw: Any) -> TokenRequest:
    return TokenRequest(role=Role.AGENT, tenant="t1", principal_id="agent-7", subject=subject, **kw)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def pems(private: Any) -> tuple[str, str]:
    private_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public_pem = (
        private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private_pem, public_pem


def test_a_valid_agent_token_yields_its_tenant_role_and_subject() -> None:
    s = settings(hs("k1", SECRET_A))
    principal = TokenVerifier(s).verify(mint_token(s, agent()))
    assert principal.tenant == "t1"
    assert principal.role is Role.AGENT
    assert principal.id == "agent-7"
    assert principal.subject == LEAD


def test_a_subject_can_be_named_by_id() -> None:
    s = settings(hs("k1", SECRET_A))
    token = mint_token(s, agent(SubjectClaim(subject_id="abc-123")))
    assert TokenVerifier(s).verify(token).subject == SubjectClaim(subject_id="abc-123")


def test_an_expired_token_is_refused_beyond_the_leeway() -> None:
    s = settings(hs("k1", SECRET_A))
    issued = datetime.now(UTC) - timedelta(hours=2)
    token = mint_token(s, agent(), now=issued)
    with pytest.raises(AuthenticationError, match="expired"):
        TokenVerifier(s).verify(token)


def test_a_token_expired_within_the_leeway_is_accepted() -> None:
    s = settings(hs("k1", SECRET_A))
    issued = datetime.now(UTC) - timedelta(hours=1, seconds=5)
    assert TokenVerifier(s).verify(mint_token(s, agent(), now=issued)).tenant == "t1"


def test_a_token_signed_with_another_secret_is_forged() -> None:
    forger = settings(hs("k1", SECRET_B))
    with pytest.raises(AuthenticationError, match="signature"):
        TokenVerifier(settings(hs("k1", SECRET_A))).verify(mint_token(forger, agent()))


def test_a_tampered_claim_breaks_the_signature() -> None:
    s = settings(hs("k1", SECRET_A))
    header, _payload, signature = mint_token(s, agent()).split(".")
    claims = jwt.decode(mint_token(s, agent()), options={"verify_signature": False})
    claims["tenant"] = "t2"
    other = jwt.encode(claims, "x" * 40, algorithm="HS256").split(".")[1]
    with pytest.raises(AuthenticationError):
        TokenVerifier(s).verify(f"{header}.{other}.{signature}")


@pytest.mark.parametrize(
    ("issuer", "audience"), [("someone-else", "factledger"), ("platform", "other-service")]
)
def test_issuer_and_audience_must_match(issuer: str, audience: str) -> None:
    s = settings(hs("k1", SECRET_A))
    other = AuthSettings(issuer=issuer, audience=audience, keys=s.keys)
    with pytest.raises(AuthenticationError, match="issuer or audience"):
        TokenVerifier(s).verify(mint_token(other, agent()))


def test_unsigned_tokens_are_refused() -> None:
    s = settings(hs("k1", SECRET_A))
    now = int(datetime.now(UTC).timestamp())
    claims = {"iss": "platform", "aud": "factledger", "sub": "x", "tenant": "t1"}
    claims |= {"role": "admin", "iat": now, "exp": now + 60}
    token = jwt.encode(claims, None, algorithm="none", headers={"kid": "k1"})
    with pytest.raises(AuthenticationError):
        TokenVerifier(s).verify(token)


def test_garbage_and_unknown_keys_are_refused() -> None:
    s = settings(hs("k1", SECRET_A), hs("k2", SECRET_B))
    verifier = TokenVerifier(s)
    with pytest.raises(AuthenticationError, match="malformed"):
        verifier.verify("not-a-token")
    stranger = settings(hs("k9", SECRET_A))
    with pytest.raises(AuthenticationError, match="key unknown"):
        verifier.verify(mint_token(stranger, agent()))


def test_keys_rotate_by_kid() -> None:
    old, new = hs("2025", SECRET_A), hs("2026", SECRET_B)
    verifier = TokenVerifier(settings(old, new))
    for kid in ("2025", "2026"):
        token = mint_token(settings(old, new), agent(), kid=kid)
        assert verifier.verify(token).tenant == "t1"
    retired = TokenVerifier(settings(new))
    with pytest.raises(AuthenticationError, match="key unknown"):
        retired.verify(mint_token(settings(old), agent()))


@pytest.mark.parametrize(
    ("algorithm", "make_key"),
    [
        ("RS256", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        ("EdDSA", ed25519.Ed25519PrivateKey.generate),
    ],
)
def test_asymmetric_keys_verify_and_resist_algorithm_confusion(
    algorithm: str, make_key: Any
) -> None:
    private_pem, public_pem = pems(make_key())
    key = JwtKeySettings(kid="pk", algorithm=algorithm, public_key_pem=public_pem)  # type: ignore[arg-type]
    s = settings(key)
    token = mint_token(s, agent(), private_key_pem=private_pem)
    assert TokenVerifier(s).verify(token).subject == LEAD
    # An attacker who signs HS256 with the public key as the secret must be refused.
    # PyJWT refuses to encode that, so sign it by hand.
    header = b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "pk"}).encode())
    payload = token.split(".")[1]
    mac = hmac.new(public_pem.encode(), f"{header}.{payload}".encode(), hashlib.sha256)
    with pytest.raises(AuthenticationError):
        TokenVerifier(s).verify(f"{header}.{payload}.{b64(mac.digest())}")


def test_an_agent_token_needs_exactly_one_subject_and_others_none() -> None:
    s = settings(hs("k1", SECRET_A))
    verifier = TokenVerifier(s)
    with pytest.raises(AuthenticationError, match="subject"):
        verifier.verify(mint_token(s, agent(subject=None)))
    reviewer = TokenRequest(role=Role.REVIEWER, tenant="t1", principal_id="r", subject=LEAD)
    with pytest.raises(AuthenticationError, match="subject"):
        verifier.verify(mint_token(s, reviewer))


def test_bad_claims_are_named_without_their_value() -> None:
    s = settings(hs("k1", SECRET_A))
    now = int(datetime.now(UTC).timestamp())
    claims = {"iss": "platform", "aud": "factledger", "sub": "x", "tenant": "bad tenant!"}
    claims |= {"role": "admin", "iat": now, "exp": now + 60}
    token = jwt.encode(claims, SECRET_A, algorithm="HS256", headers={"kid": "k1"})
    with pytest.raises(AuthenticationError, match="tenant") as info:
        TokenVerifier(s).verify(token)
    assert "bad tenant!" not in str(info.value)
    claims |= {"tenant": "t1", "role": "superuser"}
    token = jwt.encode(claims, SECRET_A, algorithm="HS256", headers={"kid": "k1"})
    with pytest.raises(AuthenticationError, match="role"):
        TokenVerifier(s).verify(token)


def test_tokens_longer_lived_than_the_maximum_are_refused() -> None:
    s = settings(hs("k1", SECRET_A))
    with pytest.raises(AuthenticationError, match="lifetime"):
        TokenVerifier(s).verify(mint_token(s, agent(ttl=timedelta(days=2))))


def _signed(claims: dict[str, Any]) -> str:
    return jwt.encode(claims, SECRET_A, algorithm="HS256", headers={"kid": "k1"})


def _claims(now: int) -> dict[str, Any]:
    return {
        "iss": "platform",
        "aud": "factledger",
        "sub": "svc",
        "tenant": "t1",
        "role": "service",
        "iat": now,
        "exp": now + 60,
    }


@pytest.mark.parametrize("claim", ["exp", "iat", "nbf"])
def test_time_claims_given_as_numeric_strings_are_refused(claim: str) -> None:
    verifier = TokenVerifier(settings(hs("k1", SECRET_A)))
    now = int(datetime.now(UTC).timestamp())
    claims = _claims(now) | {"nbf": now}
    assert verifier.verify(_signed(claims)).role is Role.SERVICE
    with pytest.raises(AuthenticationError, match=claim) as info:
        verifier.verify(_signed(claims | {claim: str(claims[claim])}))
    assert str(now) not in str(info.value)


def test_time_claims_may_be_fractional_numbers() -> None:
    verifier = TokenVerifier(settings(hs("k1", SECRET_A)))
    now = int(datetime.now(UTC).timestamp())
    claims = _claims(now) | {"iat": now + 0.5, "exp": now + 60.25}
    assert verifier.verify(_signed(claims)).id == "svc"


def test_a_token_over_the_maximum_size_is_refused_before_it_is_parsed() -> None:
    s = settings(hs("k1", SECRET_A)).model_copy(update={"max_token_bytes": 2048})
    verifier = TokenVerifier(s)
    now = int(datetime.now(UTC).timestamp())
    padded = _signed(_claims(now) | {"pad": "x" * 1200})
    assert 1024 < len(padded) <= 2048
    assert verifier.verify(padded).id == "svc"
    too_big = _signed(_claims(now) | {"pad": "x" * 2000})
    with pytest.raises(AuthenticationError, match="too large"):
        verifier.verify(too_big)
    # Not even the header is read: garbage of that size gets the same answer.
    with pytest.raises(AuthenticationError, match="too large"):
        verifier.verify("!" * 2049)


def test_the_default_maximum_token_size_is_8_kib() -> None:
    verifier = TokenVerifier(settings(hs("k1", SECRET_A)))
    now = int(datetime.now(UTC).timestamp())
    with pytest.raises(AuthenticationError, match="too large"):
        verifier.verify(_signed(_claims(now) | {"pad": "x" * 60_000}))


def test_key_settings_are_validated() -> None:
    with pytest.raises(ValidationError):
        hs("k1", "short")
    with pytest.raises(ValidationError):
        JwtKeySettings(kid="k1", algorithm="RS256", secret=SecretStr(SECRET_A))
    with pytest.raises(ValidationError):
        AuthSettings(keys=(hs("k1", SECRET_A), hs("k1", SECRET_B)))
    with pytest.raises(ValueError, match="unreadable"):
        TokenVerifier(settings(JwtKeySettings(kid="p", algorithm="RS256", public_key_pem="x")))


def test_placeholder_secrets_are_refused_in_production() -> None:
    dev = AuthSettings()
    assert dev.keys[0].secret is not None
    assert dev.keys[0].secret.get_secret_value() == DEV_JWT_SECRET
    with pytest.raises(ValidationError, match="placeholder"):
        AuthSettings(environment="production")
    AuthSettings(environment="production", keys=(hs("k1", SECRET_A),))


def test_settings_name_the_bad_auth_field_never_the_secret() -> None:
    with pytest.raises(SettingsError, match="auth") as info:
        load_settings(auth={"environment": "production"})
    assert DEV_JWT_SECRET not in str(info.value)


def test_principal_require_checks_the_role() -> None:
    principal = Principal(id="r", tenant="t1", role=Role.ANALYST)
    principal.require(Role.ANALYST, Role.ADMIN)
    with pytest.raises(PermissionDeniedError):
        principal.require(Role.REVIEWER)
