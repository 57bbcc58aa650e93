"""Which tenants a deployment serves (`FACTLEDGER_AUTH__TENANTS`, `__TENANT_PATTERN`): a token
for another is refused, so a typo in the platform's configuration never starts a new tenant;
and where MCP hosts are sent to sign in (`authorization_servers`, else a URL issuer)."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from factledger.api.http.auth import Role, TokenRequest, TokenVerifier, mint_token
from factledger.api.http.errors import AuthenticationError
from factledger.api.settings import AuthSettings, JwtKeySettings, SettingsError, load_settings

KEY = JwtKeySettings(kid="k", algorithm="HS256", secret=SecretStr("s" * 40))


def auth(**kw: object) -> AuthSettings:
    return AuthSettings(issuer="platform", audience="factledger", keys=(KEY,), **kw)  # type: ignore[arg-type]


def reviewer_of(settings: AuthSettings, tenant: str) -> str:
    request = TokenRequest(role=Role.REVIEWER, tenant=tenant, principal_id="staff-1")
    return mint_token(settings, request)


def test_a_listed_tenant_is_served_and_a_misspelt_one_refused() -> None:
    settings = auth(tenants=("acme", "globex"))
    verifier = TokenVerifier(settings)
    assert verifier.verify(reviewer_of(settings, "acme")).tenant == "acme"
    with pytest.raises(AuthenticationError, match="tenant: not a tenant of this deployment"):
        verifier.verify(reviewer_of(settings, "acmee"))


def test_a_pattern_narrows_the_names() -> None:
    settings = auth(tenant_pattern=r"[a-z]+-(eu|us)")
    assert settings.tenant_refusal("acme-eu") is None
    assert settings.tenant_refusal("acme") is not None
    with pytest.raises(AuthenticationError):
        TokenVerifier(settings).verify(reviewer_of(settings, "acme"))


def test_without_a_list_any_well_formed_name_is_a_tenant() -> None:
    settings = auth()
    assert settings.tenant_refusal("any-tenant.1") is None
    assert settings.tenant_refusal("a/b") == "1 to 64 letters, digits, '_', '.' or '-'"


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"tenants": ("acme", "Globex"), "tenant_pattern": "[a-z]+"}, "must match tenant_pattern"),
        ({"tenant_pattern": "(unclosed"}, "not a regular expression"),
        ({"tenants": ("a/b",)}, "tenants"),
    ],
)
def test_inconsistent_tenant_settings_are_refused(kw: dict[str, object], why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        auth(**kw)


def test_the_tenants_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTLEDGER_AUTH__TENANTS", '["acme"]')
    assert load_settings().auth.tenants == ("acme",)
    monkeypatch.setenv("FACTLEDGER_AUTH__TENANTS", '["a/b"]')
    with pytest.raises(SettingsError, match=r"auth\.tenants"):
        load_settings()


def test_hosts_sign_in_at_the_issuer_when_it_is_a_url() -> None:
    issuer = "https://sign-in.example.test/realms/acme"
    assert AuthSettings(issuer=issuer).sign_in_servers() == (issuer,)
    assert AuthSettings(issuer="platform").sign_in_servers() == ()
    chosen = ("https://other.example.test",)
    assert AuthSettings(issuer=issuer, authorization_servers=chosen).sign_in_servers() == chosen
    with pytest.raises(ValidationError):
        AuthSettings(authorization_servers=("not a url",))


def test_a_setting_naming_a_tenant_not_served_fails_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FACTLEDGER_AUTH__TENANTS", '["acme"]')
    monkeypatch.setenv("FACTLEDGER_PROPOSALS__TENANTS", '{"acme": {"mode": "off"}}')
    assert load_settings().proposals.tenants["acme"].mode == "off"
    monkeypatch.setenv("FACTLEDGER_PROPOSALS__TENANTS", '{"acmee": {"mode": "off"}}')
    monkeypatch.setenv("FACTLEDGER_RECALL__TENANTS", '{"globex": {"enabled": false}}')
    with pytest.raises(SettingsError) as refused:
        load_settings()
    assert str(refused.value) == (
        "invalid settings: proposals.tenants, recall.tenants: not a tenant auth serves"
    )
