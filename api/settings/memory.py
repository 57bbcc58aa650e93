"""The memory backend and the embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    Discriminator,
    Field,
    SecretStr,
    Tag,
    model_validator,
)

from factledger.adapters.embedding.onnx.model_files import (
    DEFAULT_PRESET,
    OnnxPreset,
    default_cache_dir,
)
from factledger.api.settings.base import NestedSettings, SqlName

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
    # The application role on a hot standby, for searches (with `dsn`; without it the
    # standby of `database_read_url` is used the way `database_url`'s primary is).
    read_dsn: SecretStr | None = None
    schema_name: SqlName = "factledger_memory"
    app_role: SqlName = "factledger_app"
    pool_size: int = Field(default=4, ge=1, le=64)
    # A subject past `ann_min_facts` gets its own partial HNSW index. Sync workers
    # check every `ann_maintenance_interval_s` (0: never; `factledger pgvector maintain`
    # then does it on demand).
    ann_min_facts: int = Field(default=5_000, ge=100)
    ann_maintenance_interval_s: float = Field(default=3_600.0, ge=0)
    # Sync workers rewrite the tables they erased from every `compaction_interval_s`, so a
    # forgotten value's bytes stay in the data files at most about that long. A
    # quarter of an hour keeps that bound short while a round with nothing erased costs nothing
    # (0: never; `factledger pgvector maintain` then compacts on demand).
    compaction_interval_s: float = Field(default=900.0, ge=0)
    # Each process keeps the namespaces it searches in memory, up to `mirror_budget_mb` in all
    # and `mirror_max_facts` per namespace, and searches them there after one round trip that
    # brings them up to date. 0 MB: every search reads the database. A namespace earns its
    # mirror at its `mirror_earn_after`-th search within ten minutes: a subject met once is
    # served by the database, with no load competing with the searches beside it. A larger
    # namespace earns it once searched about as often as its load costs: a search per
    # `mirror_facts_per_search` facts (null: whatever its size), at most
    # `mirror_earn_at_most` searches (ADR 0225).
    mirror_budget_mb: int = Field(default=256, ge=0, le=65_536)
    mirror_max_facts: int = Field(default=20_000, ge=1)
    mirror_earn_after: int = Field(default=2, ge=1, le=1_000)
    mirror_facts_per_search: int | None = Field(default=20, ge=1)
    mirror_earn_at_most: int = Field(default=64, ge=1, le=1_000)

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
    `cached_vectors`: the vectors of that many recent texts are kept in memory, so a text met
    again is not run again (0: none).
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
    cached_vectors: int = Field(default=4_096, ge=0, le=1_000_000)


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
