"""The memory part: `Settings` -> the embedder, the extractor and the memory backend.

Self-hosted backends embed with the configured embedder (`settings.embedder`) and extract
facts with the configured extractor (`settings.extractor`: by default the learned one over the
rules, ADR 0119); `pgvector` without DSNs uses the runtime's PostgreSQL server (`database_url`,
or the embedded one). The LLM extractor and the HTTP embedder share one HTTP client.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import structlog

from factledger.adapters.embedding.hashing import HashingEmbedder
from factledger.adapters.embedding.onnx.calibration_tables import calibration_for
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles
from factledger.adapters.embedding.openai_compatible import OpenAICompatibleEmbedder
from factledger.adapters.extraction.openai.extractor import (
    OpenAICompatibleExtractor,
    instructions_by_context,
    load_instructions,
)
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.extraction.rules.routed_guidance import RoutedGuidance
from factledger.adapters.field_reader.head import load_heads, load_question_heads, load_topic_heads
from factledger.adapters.field_reader.reader import EmbeddingFieldReader
from factledger.adapters.field_reader.topics import EmbeddingTopicReader
from factledger.adapters.in_memory.backend import InMemoryMemoryBackend
from factledger.api.bootstrap.guidance import guidance_routes
from factledger.api.bootstrap.http_client import ClientOnDemand, HttpClient, client_of
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.bootstrap.postgres import PostgresServer
from factledger.api.settings import (
    EmbedderSettings,
    ExtractionSettings,
    ExtractorSettings,
    HashingEmbedderSettings,
    InMemoryBackendSettings,
    LearnedExtractorSettings,
    OnnxEmbedderSettings,
    OpenAICompatibleEmbedderSettings,
    OpenAICompatibleExtractorSettings,
    PgvectorBackendSettings,
    RuleExtractorSettings,
    Settings,
    SupermemoryBackendSettings,
)
from factledger.application.clocks import Clock
from factledger.application.memory.calibrated import CalibratedMemoryBackend
from factledger.application.memory.coalescing_embedder import CoalescingEmbedder
from factledger.application.memory.field_slots import FieldSlottingExtractor
from factledger.application.memory.guidance_catalogue import GuidanceRoute
from factledger.application.memory.ports import Embedder, Extractor, MemoryBackend
from factledger.application.memory.topics import AskedTopicMemoryBackend, TopicTaggingExtractor
from factledger.application.memory.validating import ValidatingMemoryBackend

if TYPE_CHECKING:  # the driver is imported only where a pgvector backend is configured
    from factledger.adapters.pgvector.config import PgvectorConfig
    from factledger.adapters.pgvector.migrations_ahead import MigrationsAhead

log = structlog.get_logger(__name__)


def build_extractor(
    settings: ExtractorSettings,
    http: HttpClient,
    routes: Sequence[GuidanceRoute] = (),
) -> Extractor:
    """The extractor the settings choose, its guidance chosen per request by `routes` (and
    the packaged conversation types); `http` is only used (and, on demand, opened) by the LLM
    one (the caller owns and closes it)."""
    routed = RoutedGuidance.load(routes, default_path=settings.guidance_path)
    match settings:
        case RuleExtractorSettings():
            return RuleExtractor(routes=routed)
        case LearnedExtractorSettings():
            return learned_extractor(settings, RuleExtractor(routes=routed))
        case OpenAICompatibleExtractorSettings():
            key = settings.api_key.get_secret_value() if settings.api_key else None
            return OpenAICompatibleExtractor(
                client_of(http),
                base_url=settings.base_url,
                model=settings.model,
                instructions=load_instructions(settings.guidance_path, settings.prompt_path),
                instructions_for=instructions_by_context(routed, settings.prompt_path),
                api_key=key,
                timeout_s=settings.timeout_s,
                temperature=settings.temperature,
                response_format=settings.response_format,
            )


def build_embedder(s: EmbedderSettings, http: HttpClient) -> Embedder:
    """The embedder of every self-hosted backend; the ONNX model loads once per process;
    `http` is only used (and, on demand, opened) by the HTTP one."""
    match s:
        case OnnxEmbedderSettings():
            files = (
                OnnxModelFiles.from_directory(s.model_dir, model_sha256=s.model_sha256)
                if s.model_dir is not None
                else OnnxModelFiles.preset(s.model)
            )
            return OnnxEmbedder(
                files,
                max_tokens=s.max_tokens,
                batch_size=s.batch_size,
                threads=s.threads,
                int8_activations=s.int8_activations,
                cache_dir=s.cache_dir,
                cached_vectors=s.cached_vectors,
                # Readiness needs none of the model: the first call to embed waits for it.
                load_in_background=True,
            )
        case HashingEmbedderSettings():
            return HashingEmbedder(s.dimension)
        case OpenAICompatibleEmbedderSettings():
            return OpenAICompatibleEmbedder(
                client_of(http),
                base_url=s.base_url,
                model=s.model,
                dimension=s.dimension,
                api_key=s.api_key.get_secret_value() if s.api_key is not None else None,
                batch_size=s.batch_size,
                timeout_s=s.timeout_s,
                max_retries=s.max_retries,
            )


async def open_backend(
    settings: Settings,
    embedder: Embedder,
    clock: Clock,
    postgres: PostgresServer,
    stack: AsyncExitStack,
    *,
    http: HttpClient | None = None,
    pgvector_migrations: MigrationsAhead | None = None,
) -> MemoryBackend:
    """Opens the configured backend (self-hosted ones embed with `embedder` and extract with
    `settings.extractor`, whose LLM variant calls through `http`; without one, a client is
    opened on `stack`); it is closed when `stack` closes. Every call's inputs are checked by
    `ValidatingMemoryBackend` before they reach the adapter. pgvector takes the result of
    `pgvector_migrations` (`begin_backend`) when they were started for its tables."""
    backend: MemoryBackend
    match settings.backend:
        case InMemoryBackendSettings():
            extractor = slotted_by_field(
                build_extractor(
                    settings.extractor,
                    http or ClientOnDemand(stack),
                    guidance_routes(settings.extraction),
                ),
                settings.extraction,
                embedder,
            )
            backend = InMemoryMemoryBackend(extractor=extractor, embedder=embedder, clock=clock)
            backend = calibrated(asked_topics(backend, settings.extraction, embedder), embedder)
        case PgvectorBackendSettings() as s:
            # Imported in the arm: a start with no PostgreSQL store never imports the driver.
            from factledger.adapters.pgvector.backend import PgvectorMemoryBackend
            from factledger.adapters.pgvector.mirror.cache import MirrorSettings
            from factledger.adapters.pgvector.search_plan import PgvectorSearchPlan

            config = replace(
                _pgvector_server(s, postgres),
                timeouts=postgres.pool(max_size=s.pool_size),
                search=PgvectorSearchPlan(
                    mirror=MirrorSettings(
                        budget_mb=s.mirror_budget_mb,
                        max_facts=s.mirror_max_facts,
                        earn_after=s.mirror_earn_after,
                        facts_per_search=s.mirror_facts_per_search,
                        earn_at_most=s.mirror_earn_at_most,
                    )
                ),
            )
            backend = await PgvectorMemoryBackend.open(
                config,
                embedder=embedder,
                extractor=slotted_by_field(
                    build_extractor(
                        settings.extractor,
                        http or ClientOnDemand(stack),
                        guidance_routes(settings.extraction),
                    ),
                    settings.extraction,
                    embedder,
                ),
                clock=clock,
                migrations=pgvector_migrations,
            )
            backend = calibrated(asked_topics(backend, settings.extraction, embedder), embedder)
        case SupermemoryBackendSettings() as s:
            # Imported by the arm that chooses it: the vendor's SDK is some 3% of the imports
            # of a start, which no self-hosted deployment uses.
            from factledger.adapters.supermemory.backend import SupermemoryMemoryBackend
            from factledger.adapters.supermemory.calls import CallPolicy

            backend = SupermemoryMemoryBackend(
                api_key=s.api_key.get_secret_value(),
                base_url=s.base_url,
                policy=CallPolicy(
                    timeout_s=s.timeout_s,
                    attempt_timeout_s=s.attempt_timeout_s,
                    max_attempts=s.max_attempts,
                ),
                ingest_timeout_s=s.ingest_timeout_s,
                clock=clock,
            )
    stack.push_async_callback(backend.close)
    return ValidatingMemoryBackend(backend)


def slotted_by_field(
    extractor: Extractor, settings: ExtractionSettings, embedder: Embedder
) -> Extractor:
    """The extractor whose unslotted memories the field heads slot, unless turned off, and
    whose memories still unslotted then carry the topic they speak of (ADR 0098)."""
    if settings.field_slots:
        if settings.field_heads_path is None:
            heads = load_heads()
        else:
            heads = load_heads(settings.field_heads_path, settings.field_heads_sha256)
        extractor = FieldSlottingExtractor(extractor, EmbeddingFieldReader(embedder, heads))
    topics = topic_reader(settings, embedder)
    return extractor if topics is None else TopicTaggingExtractor(extractor, topics)


def topic_reader(settings: ExtractionSettings, embedder: Embedder) -> EmbeddingTopicReader | None:
    """The asked-topic head over `embedder` (the shipped one, or a deployment's own), unless
    turned off."""
    if not settings.asked_topics:
        return None
    if settings.topic_heads_path is None:
        return EmbeddingTopicReader(embedder, load_topic_heads())
    heads = load_topic_heads(settings.topic_heads_path, settings.topic_heads_sha256)
    return EmbeddingTopicReader(embedder, heads)


# The shipped question heads' probability for precision 0.8 out of fold on their training
# questions (ADR 0079's addendum; 0.40 is their 0.9): a wrong read costs recall one
# unconfirmed note, not a memory superseded, so more questions read is worth the precision.
ASKED_MIN_PROBABILITY = 0.27


def question_reader(settings: Settings, embedder: Embedder | None) -> EmbeddingFieldReader | None:
    """The question heads over the self-hosted backend's `embedder` (the shipped ones, or a
    deployment's own), unless turned off; Supermemory embeds on its side, so none there."""
    s = settings.extraction
    if not s.asked_fields or embedder is None:
        return None
    if isinstance(settings.backend, SupermemoryBackendSettings):
        return None
    if s.question_heads_path is None:
        heads = load_question_heads()
        return EmbeddingFieldReader(embedder, heads, min_probability=ASKED_MIN_PROBABILITY)
    # A deployment's own heads read at the probability they were fitted with.
    return EmbeddingFieldReader(
        embedder, load_question_heads(s.question_heads_path, s.question_heads_sha256)
    )


def asked_topics(
    backend: MemoryBackend, settings: ExtractionSettings, embedder: Embedder
) -> MemoryBackend:
    """A self-hosted backend whose memories-mode searches carry the topic they ask about."""
    reader = topic_reader(settings, embedder)
    return backend if reader is None else AskedTopicMemoryBackend(backend, reader)


def calibrated(backend: MemoryBackend, embedder: Embedder) -> MemoryBackend:
    """A self-hosted backend on the calibrated scale when its model has a table;
    otherwise as it is, on raw cosine, with a warning. Supermemory scores on its own scale."""
    if isinstance(embedder, CoalescingEmbedder):
        embedder = embedder.inner
    match embedder:
        case OnnxEmbedder():
            calibration = calibration_for(embedder.files)
        case _:
            log.warning("embedding.uncalibrated", model_id=embedder.model_id, table_found=False)
            calibration = None
    return backend if calibration is None else CalibratedMemoryBackend(backend, calibration)


@dataclass(frozen=True, slots=True)
class BackendOpening:
    """What opening the configured backend starts before the ledger opens (`begin_backend`):
    the embedder (its dimension fixes pgvector's tables), the HTTP client it shares with the
    extractor, and pgvector's migrations, running on a thread meanwhile."""

    embedder: Embedder
    http: ClientOnDemand
    migrations: MigrationsAhead | None = None


def begin_backend(
    settings: Settings, postgres: PostgresServer, stack: AsyncExitStack, *, migrate_ahead: bool
) -> BackendOpening:
    """Builds the configured embedder and, with `migrate_ahead` and a pgvector backend,
    starts its migrations (13 versions on a new database), which a start used to wait for
    after the ledger's stores (docs/benchmarks.md, ADR 0101)."""
    http = ClientOnDemand(stack)
    embedder = build_embedder(settings.embedder, http)
    if isinstance(embedder, OpenAICompatibleEmbedder):
        # One request for the texts of concurrent callers (the sync's items side by side).
        # Not for ONNX: with int8 activations it runs one text per inference by design, and
        # serialising its calls would cost the worker's parallelism (docs/benchmarks.md).
        embedder = CoalescingEmbedder(embedder)
    migrations = None
    if migrate_ahead and isinstance(settings.backend, PgvectorBackendSettings):
        # Imported here: a start with no PostgreSQL store never imports the driver.
        from factledger.adapters.pgvector import migrations_ahead
        from factledger.adapters.pgvector.backend import schema_options

        config = _pgvector_server(settings.backend, postgres)
        options = schema_options(config, embedder.dimension)
        migrations = migrations_ahead.start(config.admin_conninfo, options)
    return BackendOpening(embedder, http, migrations)


async def open_configured_backend(
    settings: Settings,
    clock: Clock,
    postgres: PostgresServer,
    stack: AsyncExitStack,
    opening: BackendOpening | None = None,
) -> MemoryBackend:
    """The configured embedder and memory backend, sharing one HTTP client (opened only if
    one of them calls out); all three are closed when `stack` closes. `opening` is what
    `begin_backend` started; without it, the backend is begun here."""
    begun = opening or begin_backend(settings, postgres, stack, migrate_ahead=False)
    return await open_backend(
        settings,
        begun.embedder,
        clock,
        postgres,
        stack,
        http=begun.http,
        pgvector_migrations=begun.migrations,
    )


def _pgvector_server(s: PgvectorBackendSettings, postgres: PostgresServer) -> PgvectorConfig:
    """The pgvector backend's connections: its DSNs, or the runtime's PostgreSQL server."""
    from factledger.adapters.pgvector.config import server_config

    return server_config(
        dsn=None if s.dsn is None else s.dsn.get_secret_value(),
        admin_dsn=None if s.admin_dsn is None else s.admin_dsn.get_secret_value(),
        server=None if s.dsn is not None else postgres.location(),
        schema=s.schema_name,
        app_role=s.app_role,
        pool_max=s.pool_size,
        read_dsn=None if s.read_dsn is None else s.read_dsn.get_secret_value(),
        standby=None if s.dsn is not None else postgres.read_location(),
    )
