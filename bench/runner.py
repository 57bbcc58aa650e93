"""Runs every workload on every chosen backend, one backend at a time, and collects results.

A workload that fails on a backend is recorded with its error type and the run goes on, so
one broken backend never hides the others' figures.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from factledger.bench.backends import (
    BackendUnavailableError,
    BenchEnvironment,
    OpenedBackend,
    as_served,
    open_backend,
)
from factledger.bench.config import BenchConfig
from factledger.bench.lifecycle_suite import generate_suite
from factledger.bench.locomo import DEVELOPMENT_CONVERSATIONS, Conversation, load_locomo
from factledger.bench.metrics import ScoreTable
from factledger.bench.natural.fresh import WORDING_SETS, fresh_subjects, load_wordings
from factledger.bench.natural.no_answer import run_no_answer
from factledger.bench.natural.score import load_set, questions_of, run_natural
from factledger.bench.prefeval import PrefEntry, load_prefeval, run_prefeval
from factledger.bench.progress import Advance
from factledger.bench.workloads.latency import latency_steps, run_latency
from factledger.bench.workloads.lifecycle import run_lifecycle
from factledger.bench.workloads.locomo import (
    conversation_namespace,
    ingest_records,
    ingest_transcripts,
    score_conversation,
)

log = structlog.get_logger(__name__)
Json = dict[str, Any]
# (description, total steps) -> an advance callable; the CLI backs it with rich.
StartTask = Callable[[str, int], Advance]


@dataclass(slots=True)
class Datasets:
    locomo: list[Conversation] = field(default_factory=list)
    prefeval: dict[str, list[PrefEntry]] = field(default_factory=dict)
    natural: list[dict[str, Any]] = field(default_factory=list)
    # the same subjects asked each set of fresh wordings (ADR 0036, 0040), by the set's name;
    # a set whose file is missing is left out
    natural_fresh: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def load_datasets(config: BenchConfig) -> Datasets:
    data = Datasets()
    if config.locomo is not None and config.locomo.exists():
        conversations = load_locomo(config.locomo)[: config.locomo_conversations]
        if config.locomo_questions is not None:
            conversations = [_first_questions(c, config.locomo_questions) for c in conversations]
        data.locomo = conversations
    if config.prefeval is not None and config.prefeval.is_dir():
        data.prefeval = load_prefeval(config.prefeval)
    if config.natural is not None and config.natural.is_file():
        data.natural = load_set(config.natural)[: config.natural_subjects]
        data.natural_fresh = {
            name: fresh_subjects(data.natural, load_wordings(path))
            for name, path in WORDING_SETS.items()
            if path.is_file()
        }
    return data


def _first_questions(conversation: Conversation, count: int) -> Conversation:
    return Conversation(
        conversation.sample_id,
        conversation.speakers,
        conversation.sessions,
        conversation.questions[:count],
    )


async def _phase(result: Json, name: str, work: Callable[[], Awaitable[Any]]) -> None:
    """Runs one workload, storing its output, wall time and (if it failed) error type."""
    started = time.perf_counter()
    try:
        result[name] = await work()
    except Exception as exc:  # one failing workload must not hide the other figures
        result.setdefault("errors", {})[name] = type(exc).__name__
        log.warning("bench.phase_failed", phase=name, error_type=type(exc).__name__)
    result.setdefault("seconds", {})[name] = round(time.perf_counter() - started, 1)


async def _locomo(
    opened: OpenedBackend,
    env: BenchEnvironment,
    config: BenchConfig,
    data: Datasets,
    start: StartTask,
) -> Json:
    out: Json = {}
    conversations = data.locomo
    if opened.traits.remote:
        conversations = conversations[: config.remote_locomo_conversations]
    styles = dict.fromkeys(run.style for run in config.locomo_runs)
    for style in styles:
        if style == "transcripts" and not opened.traits.transcripts:
            continue
        runs = [run for run in config.locomo_runs if run.style == style]
        tables = {run.label: ScoreTable() for run in runs}
        parts = {run.label: {"dev": ScoreTable(), "heldout": ScoreTable()} for run in runs}
        counts = {run.label: [0, 0] for run in runs}  # hits returned, hits without a source
        turns = sum(len(c.turns) for c in conversations)
        questions = sum(len(c.questions) for c in conversations) * len(runs)
        advance = start(f"{opened.name} · LoCoMo {style}", len(conversations) + questions)
        facts = 0
        for position, conversation in enumerate(conversations):
            part = "dev" if position < DEVELOPMENT_CONVERSATIONS else "heldout"
            ns = conversation_namespace(env.run_id, conversation, style)
            if style == "records":
                await ingest_records(opened.backend, ns, conversation)
            else:
                facts += await ingest_transcripts(opened.backend, ns, conversation)
            advance(1)
            for run in runs:
                scored = ScoreTable()
                returned, unattributed = await score_conversation(
                    opened.backend, ns, conversation, run, scored, advance
                )
                tables[run.label].merge(scored)
                parts[run.label][part].merge(scored)
                counts[run.label][0] += returned
                counts[run.label][1] += unattributed
            await opened.backend.drop_namespace(ns)
        for label, table in tables.items():
            returned, unattributed = counts[label]
            out[label] = table.as_dict()
            for part, scored in parts[label].items():
                if scored.count():
                    out[label][f"part {part}"] = scored.as_dict()["overall"]
            out[label]["overall"]["unattributed_hits"] = (
                round(unattributed / returned, 4) if returned else 0.0
            )
        out[f"{style}_ingested"] = facts if style == "transcripts" else turns
    return out


async def _prefeval(
    opened: OpenedBackend,
    env: BenchEnvironment,
    config: BenchConfig,
    data: Datasets,
    start: StartTask,
) -> Json:
    per_topic = config.prefeval_per_topic
    if opened.traits.remote and config.remote_prefeval_per_topic is not None:
        per_topic = min(
            per_topic or config.remote_prefeval_per_topic, config.remote_prefeval_per_topic
        )
    total = sum(len(entries[:per_topic]) for entries in data.prefeval.values())
    advance = start(f"{opened.name} · PrefEval", total)
    mode = config.prefeval_mode
    scores = await run_prefeval(
        opened.backend,
        env.run_id,
        data.prefeval,
        mode=mode,
        per_topic=per_topic,
        advance=advance,
    )
    return {
        "mode": mode.value,
        "per_topic": per_topic,
        "said": scores.said.as_dict(),
        "inferred_strict": scores.strict.as_dict(),
        "inferred_lenient": scores.lenient.as_dict(),
    }


async def _natural(
    opened: OpenedBackend, env: BenchEnvironment, data: Datasets, start: StartTask
) -> Json:
    asked = sum(len(questions_of(subject)) for subject in data.natural)
    fresh = sum(len(questions_of(s)) for subjects in data.natural_fresh.values() for s in subjects)
    advance = start(f"{opened.name} · natural questions", 2 * (asked + fresh))
    # Per-turn recall's threshold is calibrated relevance: score as the product serves it.
    backend, scale = as_served(opened, env.embedder)
    scores = await run_natural(backend, env.run_id, data.natural, advance)
    result: Json = {**scores.as_dict(), "scale": scale, "misses": scores.misses}
    # Precision where nothing answers (ADR 0036): the set asked without its answers.
    result["no_answer"] = (
        await run_no_answer(backend, env.run_id, data.natural, advance)
    ).as_dict()
    for name, subjects in data.natural_fresh.items():
        fresh_scores = await run_natural(backend, f"{env.run_id}-{name}", subjects, advance)
        result[name] = fresh_scores.as_dict()
        no_answer = await run_no_answer(backend, f"{env.run_id}-{name}", subjects, advance)
        result[f"{name}_no_answer"] = no_answer.as_dict()
    return result


async def _lifecycle(
    opened: OpenedBackend, env: BenchEnvironment, config: BenchConfig, start: StartTask
) -> Json:
    suite = generate_suite(
        config.lifecycle_subjects, seed=config.seed, budgets=config.lifecycle_budgets
    )
    advance = start(f"{opened.name} · lifecycle", 2 * len(suite))
    scores = await run_lifecycle(opened.backend, env.run_id, suite, env.clock, advance=advance)
    return scores.as_dict()


async def _latency(
    opened: OpenedBackend, env: BenchEnvironment, config: BenchConfig, start: StartTask
) -> Json:
    sizes = config.latency_remote if opened.traits.remote else config.latency_local
    advance = start(f"{opened.name} · latency", latency_steps(sizes))
    env.embedder.enabled = False  # every measured search pays for its query embedding
    opened.set_latency(True)
    try:
        scores = await run_latency(
            opened.backend,
            env.run_id,
            sizes,
            env.clock,
            transcripts=opened.traits.transcripts,
            seed=config.seed,
            advance=advance,
        )
    finally:
        opened.set_latency(False)
        env.embedder.enabled = True
    return scores.summary()


def _skip_reason(
    workload: str, opened: OpenedBackend, data: Datasets, config: BenchConfig
) -> str | None:
    """Why a workload does not run on this backend, or None when it does."""
    if workload not in config.workloads:
        return "not chosen"
    if workload in ("natural", "lifecycle") and not opened.traits.transcripts:
        return "backend has no extraction path"
    missing = {
        "locomo": None if data.locomo else "no LoCoMo file at the given path",
        "prefeval": None if data.prefeval else "no PrefEval folder at the given path",
        "natural": None if data.natural else "no natural-question set at the given path",
    }
    return missing.get(workload)


async def run_backend(
    name: str, env: BenchEnvironment, config: BenchConfig, data: Datasets, start: StartTask
) -> Json:
    """Every workload on one backend; the result notes what was skipped and why."""
    result: Json = {"skipped": {}}
    try:
        async with open_backend(name, env) as opened:
            result.update(simulated=opened.traits.simulated, detail=opened.detail)
            work: dict[str, Callable[[], Awaitable[Any]]] = {
                "locomo": lambda: _locomo(opened, env, config, data, start),
                "prefeval": lambda: _prefeval(opened, env, config, data, start),
                "natural": lambda: _natural(opened, env, data, start),
                "lifecycle": lambda: _lifecycle(opened, env, config, start),
                "latency": lambda: _latency(opened, env, config, start),
            }
            for workload, job in work.items():
                reason = _skip_reason(workload, opened, data, config)
                if reason is None:
                    await _phase(result, workload, job)
                else:
                    result["skipped"][workload] = reason
    except BackendUnavailableError as exc:
        result["unavailable"] = str(exc)
    return result


async def run_bench(
    env: BenchEnvironment,
    config: BenchConfig,
    start: StartTask,
    on_backend_done: Callable[[Json], None] = lambda _results: None,
) -> Json:
    """All backends in the order given; returns the `backends` part of the report.

    `on_backend_done` gets the results so far after each backend (a long run keeps them).
    """
    data = load_datasets(config)
    results: Json = {}
    for name in config.backends:
        started = time.perf_counter()
        results[name] = await run_backend(name, env, config, data, start)
        results[name]["total_seconds"] = round(time.perf_counter() - started, 1)
        log.info("bench.backend_done", backend=name, seconds=results[name]["total_seconds"])
        on_backend_done(results)
    return results
