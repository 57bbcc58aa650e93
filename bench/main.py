"""One bench run: build the shared environment, run every backend, write the report."""

from __future__ import annotations

import json
import resource
import tempfile
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from uuid import uuid4

from factledger.adapters.embedding.onnx.calibration_tables import calibration_for
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.field_reader.head import load_heads, load_topic_heads
from factledger.adapters.field_reader.reader import EmbeddingFieldReader
from factledger.adapters.field_reader.topics import EmbeddingTopicReader
from factledger.adapters.postgres_server import PostgresLocation
from factledger.api.bootstrap.judgement import learned_extractor
from factledger.api.settings.extraction import LearnedExtractorSettings
from factledger.application.clocks import SystemClock
from factledger.application.memory.field_slots import FieldSlottingExtractor
from factledger.application.memory.ports import Embedder, Extractor
from factledger.application.memory.topics import TopicTaggingExtractor
from factledger.bench.backends import BenchEnvironment
from factledger.bench.caching_embedder import CachingEmbedder
from factledger.bench.calibration import all_pairs, calibrate_model
from factledger.bench.calibration import render as render_calibration
from factledger.bench.config import BenchConfig
from factledger.bench.machine import load_average, machine_info, package_versions
from factledger.bench.report.files import REFERENCES, clean, write_json
from factledger.bench.report.markdown import render_markdown
from factledger.bench.report.plots import write_plots
from factledger.bench.runner import StartTask, run_bench
from factledger.testing.supermemory.faults import LatencyProfile

Json = dict[str, Any]


def sim_latency_profile(name: str, seed: int) -> LatencyProfile | None:
    """`observed`: ~0.5 s typical with a rare 38 s stall; `fast`: ~20 ms; `none`: no delay."""
    if name == "observed":
        return LatencyProfile.observed(seed=seed)
    if name == "fast":
        return LatencyProfile(typical_s=0.02, jitter_s=0.005, minimum_s=0.005, seed=seed)
    if name == "none":
        return None
    raise ValueError(name)


def describe_profile(profile: LatencyProfile | None, name: str) -> str:
    if profile is None:
        return f"{name}: no added delay"
    return (
        f"{name}: typical {profile.typical_s} s +/- {profile.jitter_s} s (min {profile.minimum_s}"
        f" s), stall {profile.stall_s} s with probability {profile.stall_probability}; applied "
        "to every request during the latency workload only"
    )


def _meta(config: BenchConfig, embedder: Embedder, started: datetime, run_id: str) -> Json:
    settings = asdict(config)
    settings["locomo_runs"] = [run.label for run in config.locomo_runs]
    return {
        "run_id": run_id,
        "started_at": started.isoformat(timespec="seconds"),
        "command": config.command,
        "smoke": config.smoke,
        "seed": config.seed,
        "machine": machine_info(),
        "versions": package_versions(),
        "embedder": embedder.model_id,
        "extractor": _EXTRACTOR_NAMES.get(config.extractor, config.extractor),
        "sim_latency": describe_profile(
            sim_latency_profile(config.sim_profile, config.seed), config.sim_profile
        ),
        "settings": {key: str(value) for key, value in settings.items()},
        "references": REFERENCES,
    }


_EXTRACTOR_NAMES = {
    "rule": "RuleExtractor (default guidance)",
    "learned": "LearnedExtractor over the rules (default guidance)",
    "learned-sentences": "LearnedExtractor over the subject's sentences, no rule",
    "learned-rules-and-sentences": (
        "LearnedExtractor over the rules and the sentences no rule fact stands on"
    ),
}


def memory_extractor(name: str) -> Extractor:
    """The extractor the backends' memories come from, by the lab's name for it."""
    if name == "rule":
        return RuleExtractor()
    candidates: Literal["rules", "sentences", "rules_and_sentences"] = "rules"
    if name == "learned-sentences":
        candidates = "sentences"
    elif name == "learned-rules-and-sentences":
        candidates = "rules_and_sentences"
    return learned_extractor(LearnedExtractorSettings(candidates=candidates), RuleExtractor())


async def calibration_figures(config: BenchConfig, embedder: Embedder) -> Json | None:
    """The embedder's calibration at the default threshold, before and after, on held-out
    pairs (ADR 0023; `factledger-lab bench calibration` adds the other packaged model and each
    backend's search). Skipped in a smoke run, or without LoCoMo."""
    if config.smoke or config.locomo is None or not config.locomo.is_file():
        return None
    # The table the product serves with, measured on the same scores beside the refit (ADR 0046).
    packaged = calibration_for(embedder.files) if isinstance(embedder, OnnxEmbedder) else None
    pairs = all_pairs(config.locomo, seed=config.seed)
    result = await calibrate_model(embedder, pairs, packaged=packaged)
    return {
        "model_id": result.model_id,
        "slope": result.calibration.slope,
        "intercept": result.calibration.intercept,
        "before": {name: asdict(f) for name, f in result.raw.items()},
        "after": {name: asdict(f) for name, f in result.calibrated.items()},
        "markdown": render_calibration([result]),
    }


async def run(
    config: BenchConfig,
    start: StartTask,
    *,
    embedder: Embedder | None = None,
    postgres: PostgresLocation | None = None,
) -> Json:
    """Runs the bench and writes `report.json`, `report.md` and the plots to `out_dir`.

    `embedder` defaults to the product's local ONNX model; `postgres` to a fresh embedded server.
    """
    started = datetime.now(UTC)
    clock_start = time.perf_counter()
    run_id = f"{started:%Y%m%d%H%M%S}{uuid4().hex[:4]}"  # unique even for runs a second apart
    load_at_start = load_average()

    def partial(results: Json) -> None:
        path = config.out_dir / "report.partial.json"
        path.write_text(json.dumps(clean(results), indent=2) + "\n", encoding="utf-8")

    inner = embedder or OnnxEmbedder()
    config.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="factledger-bench-") as work:
        env = BenchEnvironment(
            embedder=CachingEmbedder(inner),
            # As the product composes it: the rules' memories slotted by field where the
            # field heads know the subject's kind (LoCoMo's transcripts name none).
            extractor=TopicTaggingExtractor(
                FieldSlottingExtractor(
                    memory_extractor(config.extractor),
                    EmbeddingFieldReader(inner, load_heads()),
                ),
                EmbeddingTopicReader(inner, load_topic_heads()),
            ),
            clock=SystemClock(),
            work_dir=Path(work),
            run_id=run_id,
            sim_latency=sim_latency_profile(config.sim_profile, config.seed),
            seed=config.seed,
            postgres_location=postgres,
        )
        try:
            backends = await run_bench(env, config, start, partial)
        finally:
            await env.close()
    report: Json = {"meta": _meta(config, inner, started, run_id), "backends": backends}
    report["calibration"] = await calibration_figures(config, inner)
    report["meta"]["machine"]["load_average_at_start"] = load_at_start
    report["meta"]["duration_s"] = round(time.perf_counter() - clock_start, 1)
    # CPU seconds of this process (all threads): on a shared machine, wall time mostly measures
    # the neighbours; this says what the run itself costs.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    report["meta"]["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 1)
    report["meta"]["plots"] = [path.name for path in write_plots(backends, config.out_dir)]
    write_json(report, config.out_dir)
    (config.out_dir / "report.md").write_text(render_markdown(report) + "\n", encoding="utf-8")
    (config.out_dir / "report.partial.json").unlink(missing_ok=True)
    return report
