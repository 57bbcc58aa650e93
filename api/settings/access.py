"""The HTTP API, its auth and rate limits, the console, the event stream and webhooks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    ConfigDict,
    Field,
    HttpUrl,
    SecretStr,
    model_validator,
)

from factledger.adapters.network_addresses import names_internal_host
from factledger.api.settings.base import NestedSettings
from factledger.application.ledger.event_log import TOPIC_BY_TYPE

# -- HTTP API and auth -------------------------------------------------------------------------

# Shipped so that `factledger serve` works out of the box in dev; refused anywhere else.
DEV_JWT_SECRET = "factledger-dev-secret-change-me-not-for-production"  # noqa: S105
_PLACEHOLDER = re.compile(r"change[-_]?me|changethis|placeholder", re.IGNORECASE)
MIN_SECRET_BYTES = 32
# What any tenant name looks like (token claims, settings, the CLI's `--tenant`); a deployment
# narrows it with `AuthSettings.tenants` or `tenant_pattern`.
TENANT_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
# An OAuth issuer identifier: compared byte for byte by hosts, so kept as written (no
# normalisation adding a trailing slash).
_URL = r"^https?://[^\s/?#]+(/[^\s?#]*)?$"


class JwtKeySettings(NestedSettings):
    """One token verification key. HS256 takes a shared secret; RS256 and EdDSA a PEM public
    key. Keys rotate by adding a new `kid` before retiring the old one."""

    model_config = ConfigDict(frozen=True)

    kid: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    algorithm: Literal["HS256", "RS256", "EdDSA"] = "HS256"
    secret: SecretStr | None = None
    public_key_pem: str | None = None

    @model_validator(mode="after")
    def _material_matches_algorithm(self) -> JwtKeySettings:
        if self.algorithm == "HS256":
            if self.secret is None or self.public_key_pem is not None:
                raise ValueError("an HS256 key needs `secret` and no `public_key_pem`")
            if len(self.secret.get_secret_value().encode()) < MIN_SECRET_BYTES:
                raise ValueError(f"an HS256 secret needs at least {MIN_SECRET_BYTES} bytes")
        elif self.public_key_pem is None or self.secret is not None:
            raise ValueError(f"an {self.algorithm} key needs `public_key_pem` and no `secret`")
        return self


class AuthSettings(NestedSettings):
    """Bearer-token verification: who may issue (`issuer`), for whom (`audience`), with which
    keys, e.g. `FACTLEDGER_AUTH__KEYS='[{"kid": "2026", "secret": "..."}]'`. Outside `dev` and
    `test`, a placeholder secret (the shipped dev one included) is refused.

    - `authorization_servers`: where MCP hosts sign in (OAuth issuer URLs), announced in the
      protected-resource metadata (`/.well-known/oauth-protected-resource`); default: `issuer`,
      when it is an http(s) URL.
    - `tenants`: the tenants this deployment serves, e.g. `FACTLEDGER_AUTH__TENANTS='["acme"]'`;
      `tenant_pattern`: a regular expression every tenant name must match in full. A token
      for another tenant is refused (401), and so is a CLI `--tenant` naming one, so a typo
      never starts a new tenant. Empty list: any name of the form `TENANT_PATTERN`. Other
      settings that name a tenant must name a served one (`Settings`).
    """

    environment: Literal["dev", "test", "production"] = "dev"
    issuer: str = Field(default="factledger-dev", min_length=1, max_length=200)
    audience: str = Field(default="factledger", min_length=1, max_length=200)
    keys: tuple[JwtKeySettings, ...] = (
        JwtKeySettings(kid="dev", algorithm="HS256", secret=SecretStr(DEV_JWT_SECRET)),
    )
    leeway_s: float = Field(default=30.0, ge=0, le=300)
    max_lifetime_s: int = Field(default=24 * 3600, gt=0)
    # Platform tokens are well under 2 KiB; a bigger one is refused before it is parsed.
    max_token_bytes: int = Field(default=8 * 1024, ge=1024, le=64 * 1024)
    authorization_servers: tuple[Annotated[str, Field(pattern=_URL)], ...] = ()
    tenants: tuple[Annotated[str, Field(pattern=TENANT_PATTERN)], ...] = ()
    tenant_pattern: str = Field(default=TENANT_PATTERN, min_length=1, max_length=500)

    @model_validator(mode="after")
    def _keys_usable(self) -> AuthSettings:
        kids = [key.kid for key in self.keys]
        if not kids or len(kids) != len(set(kids)):
            raise ValueError("`keys` needs at least one key and unique `kid`s")
        if self.environment == "production" and self.placeholder_kids():
            raise ValueError("placeholder secrets are refused in production")
        return self

    @model_validator(mode="after")
    def _tenants_consistent(self) -> AuthSettings:
        try:
            pattern = re.compile(self.tenant_pattern)
        except re.error:
            raise ValueError("tenant_pattern: not a regular expression") from None
        if any(pattern.fullmatch(name) is None for name in self.tenants):
            raise ValueError("tenants: every name must match tenant_pattern")
        return self

    def tenant_refusal(self, name: str) -> str | None:
        """Why `name` is not a tenant of this deployment (None: it is). Names no tenant, so
        the answer can reach a caller of another tenant."""
        if re.fullmatch(TENANT_PATTERN, name) is None:
            return "1 to 64 letters, digits, '_', '.' or '-'"
        if self.tenants and name not in self.tenants:
            return "not a tenant of this deployment (FACTLEDGER_AUTH__TENANTS)"
        if re.fullmatch(self.tenant_pattern, name) is None:
            return "not a tenant name of this deployment (FACTLEDGER_AUTH__TENANT_PATTERN)"
        return None

    def sign_in_servers(self) -> tuple[str, ...]:
        """The OAuth authorization servers hosts are sent to (`authorization_servers`)."""
        if self.authorization_servers:
            return self.authorization_servers
        return (self.issuer,) if re.fullmatch(_URL, self.issuer) else ()

    def placeholder_kids(self) -> list[str]:
        return [
            key.kid
            for key in self.keys
            if key.secret is not None and _PLACEHOLDER.search(key.secret.get_secret_value())
        ]


class RoleRateSettings(NestedSettings):
    """One principal's limit: `per_s` requests a second, `burst` at once."""

    model_config = ConfigDict(frozen=True)

    per_s: float = Field(gt=0, le=1_000_000)
    burst: int = Field(ge=1, le=1_000_000)


RateLimitRole = Literal["agent", "service", "reviewer", "analyst", "admin"]
# Each principal's limit by its token's role. A platform usually calls with one `service`
# principal for all its users, so that one is sized above what one process serves (several
# hundred writes a second); an agent's token speaks for one conversation, a reviewer's and an
# analyst's for one person at a screen or a script paging through a feed.
DEFAULT_ROLE_RATES: dict[str, RoleRateSettings] = {
    "service": RoleRateSettings(per_s=2000, burst=4000),
    "admin": RoleRateSettings(per_s=100, burst=400),
    "analyst": RoleRateSettings(per_s=50, burst=200),
    "agent": RoleRateSettings(per_s=20, burst=100),
    "reviewer": RoleRateSettings(per_s=20, burst=100),
}


class RateLimitSettings(NestedSettings):
    """Rate limits of the HTTP API, on by default (the embedded dev server included);
    `enabled=false` switches every limit off.

    - Each principal (tenant + token `sub`) gets the rate of its token's role
      (`DEFAULT_ROLE_RATES`, overridden per role by `roles`, or for every role without an entry
      there by `principal_per_s` / `principal_burst`); each tenant, all its principals
      together, `tenant_burst` at `tenant_per_s`. Checked right after the token is verified,
      before any store is read.
    - Each client address gets `failed_auth_burst` failed authentications, refilled at
      `failed_auth_per_s`; an address that has used them up is answered 429 before its token
      is even verified, so forged tokens cannot be sprayed.
    - `store=shared` (the default) counts in a store every process shares, beside the event
      store: a table in its PostgreSQL schema, or the SQLite file `<data dir>/limits.sqlite`
      (the processes of one host sharing a data directory); with the in-memory event store,
      and with `store=process`, each process counts on its own (a deployment's limit is then
      the sum over its processes). While the shared store does not answer, each process
      counts on its own. A process takes the shared counts in leases (`api.http.rate_leases`,
      ADR 0096): a key admits at most its limit plus the tokens other processes hold unspent.
    - Health and metrics endpoints are never limited.
    """

    enabled: bool = True
    store: Literal["shared", "process"] = "shared"
    roles: dict[RateLimitRole, RoleRateSettings] = Field(default_factory=dict)
    principal_per_s: float | None = Field(default=None, gt=0, le=1_000_000)
    principal_burst: int | None = Field(default=None, ge=1, le=1_000_000)
    tenant_per_s: float = Field(default=5000, gt=0, le=1_000_000)
    tenant_burst: int = Field(default=10_000, ge=1, le=1_000_000)
    failed_auth_per_s: float = Field(default=1, gt=0, le=1_000_000)
    failed_auth_burst: int = Field(default=30, ge=1, le=1_000_000)
    # Keys kept in memory when counting per process; the least recently used go first (and
    # start with a full burst again).
    max_tracked: int = Field(default=100_000, ge=100, le=10_000_000)

    def role_rate(self, role: str) -> RoleRateSettings:
        """The principal limit of a token of `role`."""
        if role in self.roles:
            return self.roles[role]
        built_in = DEFAULT_ROLE_RATES[role]
        return RoleRateSettings(
            per_s=self.principal_per_s or built_in.per_s,
            burst=self.principal_burst or built_in.burst,
        )


class EventStreamSettings(NestedSettings):
    """`GET /v1/events/stream`: how often it looks for new events, how many it reads at once,
    and how long an idle stream waits before a heartbeat comment (proxies close silent ones)."""

    heartbeat_s: float = Field(default=15.0, gt=0, le=300)
    poll_s: float = Field(default=0.5, gt=0, le=60)
    batch: int = Field(default=200, ge=1, le=5000)
    # Streams one principal (one `sub` of one tenant) may hold open at once in one process;
    # one more is a 429 with Retry-After.
    max_per_principal: int = Field(default=4, ge=1, le=1000)


class WebhookEndpointSettings(NestedSettings):
    """One endpoint that receives a tenant's events (`factledger webhooks run`)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    tenant: str = Field(pattern=TENANT_PATTERN)
    url: HttpUrl
    secret: SecretStr = Field(min_length=32)  # HMAC-SHA256 key shared with the receiver
    kinds: tuple[str, ...] = ()  # subject kinds to send; none: all
    types: tuple[str, ...] = ()  # event types to send (the stream's names); none: all
    content: bool = False  # messages, values, quotes, summaries: only when the receiver may
    max_attempts: int = Field(default=8, ge=1, le=100)
    backoff_s: float = Field(default=1.0, gt=0, le=3600)
    max_backoff_s: float = Field(default=300.0, gt=0, le=86_400)
    timeout_s: float = Field(default=10.0, gt=0, le=120)

    @model_validator(mode="after")
    def _known_types(self) -> WebhookEndpointSettings:
        unknown = set(self.types) - set(TOPIC_BY_TYPE)
        if unknown:
            raise ValueError(f"types: unknown event types {sorted(unknown)}")
        return self


class WebhooksSettings(NestedSettings):
    """Signed webhooks: each endpoint gets its tenant's events in order, retried with backoff;
    positions and attempts are kept beside the event store: a table in its PostgreSQL schema, else
    the SQLite file `log_path` (default `<data_dir>/webhooks.sqlite`)."""

    endpoints: tuple[WebhookEndpointSettings, ...] = ()
    poll_s: float = Field(default=1.0, gt=0, le=60)
    batch: int = Field(default=100, ge=1, le=1000)
    log_path: Path | None = None
    # Endpoints on loopback, link-local or private addresses (services behind the firewall)
    # are refused unless this says the operator means them (a receiver on the same host).
    allow_internal_addresses: bool = False

    def internal_endpoints(self) -> list[str]:
        """Where endpoints name an internal host as written (`endpoints[n].url`)."""
        return [
            f"webhooks.endpoints[{n}].url"
            for n, endpoint in enumerate(self.endpoints)
            if names_internal_host(endpoint.url.host or "")
        ]

    @model_validator(mode="after")
    def _unique_ids(self) -> WebhooksSettings:
        ids = [e.id for e in self.endpoints]
        if len(ids) != len(set(ids)):
            raise ValueError("endpoints: ids must be unique")
        return self


class ApiSettings(NestedSettings):
    """The HTTP server (`factledger serve`).

    `public_url` is where clients reach it when that is not `http://host:port` (a proxy, TLS,
    a container's published port), e.g. `https://memory.example.com`: `console-link` prints
    links to it, and the protected-resource metadata names it. Unset: `console-link` uses
    host and port, the metadata each request's own URL.
    """

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    public_url: str | None = Field(default=None, pattern=_URL)
    workers: int = Field(default=1, ge=1, le=64)
    max_body_bytes: int = Field(default=256 * 1024, ge=1024, le=64 * 1024 * 1024)
    # Saved responses of `Idempotency-Key` requests, in a store beside the event store.
    idempotency_ttl_s: float = Field(default=24 * 3600, gt=0, le=30 * 24 * 3600)
    # How long a claimed key stays "in progress" if its process dies mid-request; a live
    # request renews its claim every third of this.
    idempotency_lease_s: float = Field(default=5, ge=0.5, le=3600)
    # Writes one process runs at once (recall and context never wait for these slots); a
    # write that finds none free within `write_wait_s` answers 503 with Retry-After.
    max_concurrent_writes: int = Field(default=6, ge=1, le=256)
    write_wait_s: float = Field(default=2.0, gt=0, le=60)
    # The part of those slots one tenant may hold at once (at least one slot): a tenant whose
    # writes last (slow imports) leaves the rest to the others. A deployment that names one
    # tenant in `auth.tenants` gives it every slot.
    tenant_write_share: float = Field(default=0.5, gt=0, le=1)
    # A request body may wait on its client `body_timeout_s`, plus a second for every
    # `body_min_bytes_per_s` bytes it delivered; later, it is a 408.
    body_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    body_min_bytes_per_s: int = Field(default=8 * 1024, ge=1, le=1024 * 1024 * 1024)
    rate_limit: RateLimitSettings = RateLimitSettings()
    event_stream: EventStreamSettings = EventStreamSettings()
    # How long a starting process keeps trying a store that is away (a database restarting):
    # a process that gives up fails its startup, and uvicorn then stops every worker.
    startup_wait_s: float = Field(default=30.0, ge=0, le=600)

    def base_url(self, *, host: str | None = None, port: int | None = None) -> str:
        """Where a browser reaches `factledger serve` started with `host` and `port` (its
        `--host` / `--port`, else these settings): `public_url` unless either is given."""
        if self.public_url is not None and host is None and port is None:
            return self.public_url.rstrip("/")
        name = host or self.host
        # A wildcard address is where the server listens, not where anyone can browse to.
        name = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(name, name)  # noqa: S104
        if ":" in name:
            name = f"[{name}]"
        return f"http://{name}:{port or self.port}"


class ConsoleSettings(NestedSettings):
    """The reviewer's console under `/console`: server-rendered pages for the
    reviewer, analyst and admin roles, signed in once with a platform token.

    `session_secret` signs the console's session cookies; without one each process draws a
    random key at start, so sessions end with the process and several workers need a shared
    secret (`FACTLEDGER_CONSOLE__SESSION_SECRET`). To rotate it, move the old one to
    `previous_session_secrets`: cookies it signed still read until they end, new ones are
    signed with the new secret.
    """

    enabled: bool = True
    session_ttl_s: int = Field(default=900, ge=60, le=8 * 3600)
    session_secret: SecretStr | None = None
    previous_session_secrets: tuple[SecretStr, ...] = ()

    @model_validator(mode="after")
    def _secret_long_enough(self) -> ConsoleSettings:
        for secret in (self.session_secret, *self.previous_session_secrets):
            if secret is not None and len(secret.get_secret_value().encode()) < MIN_SECRET_BYTES:
                raise ValueError(f"session_secret needs at least {MIN_SECRET_BYTES} bytes")
        if self.previous_session_secrets and self.session_secret is None:
            raise ValueError("previous_session_secrets need a session_secret to sign with")
        return self
