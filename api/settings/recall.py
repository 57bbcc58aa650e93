"""Recall, short-term memory and the sync."""

from __future__ import annotations

from dataclasses import field as dataclass_field
from typing import Annotated, Any

from pydantic import (
    Field,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic_core import ArgsKwargs

from factledger.api.settings.base import FORBID_EXTRA, NestedSettings, SqlName
from factledger.api.settings.stores import (
    InProcessStoreSettings,
    PostgresSchemaStoreSettings,
    SqliteFileStoreSettings,
)
from factledger.application.recall.policy import RecallPolicy

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


class InMemorySessionBufferSettings(InProcessStoreSettings):
    """Short-term memory in process memory (lost on restart)."""


class SqliteSessionBufferSettings(SqliteFileStoreSettings):
    """Short-term memory in a SQLite file; default `<data_dir>/short_term.sqlite`."""


class PostgresSessionBufferSettings(PostgresSchemaStoreSettings):
    """Short-term memory in PostgreSQL, shared by every API server."""

    schema_name: SqlName = "factledger_short_term"


SessionBufferSettings = Annotated[
    InMemorySessionBufferSettings | SqliteSessionBufferSettings | PostgresSessionBufferSettings,
    Field(discriminator="kind"),
]


class InMemorySyncStoreSettings(InProcessStoreSettings):
    """The sync queue in process memory: the worker runs inside the API process."""


class PostgresSyncStoreSettings(PostgresSchemaStoreSettings):
    """The sync queue in PostgreSQL: `factledger worker` processes share it."""

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
    # Items of different subjects a `factledger worker` applies side by side (a claim holds at
    # most one item per subject); a worker inside an API process takes them one at a time.
    concurrency: int = Field(default=4, ge=1, le=64)
    # The longest wait between tries of an item whose backend or store is away (ADR 0183).
    max_outage_wait_s: float = Field(default=60.0, gt=0, le=3600)
