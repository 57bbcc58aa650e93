"""The settings of one bench run: what to run, on which backends, with which sample sizes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from factledger.application.memory.types import SearchMode
from factledger.bench.workloads.latency import LatencySizes
from factledger.bench.workloads.locomo import LocomoRun

DEFAULT_BACKENDS = ("in-memory", "pgvector", "supermemory-sim")
# Relative to the working directory, so the data is read where it lies and never copied.
DEFAULT_LOCOMO = Path("../shared/datasets/locomo/locomo10.json")
DEFAULT_PREFEVAL = Path("../shared/datasets/prefeval")
DEFAULT_NATURAL = Path("tests/data/natural_questions.yaml")  # the project's own, generated
WORKLOADS = ("locomo", "prefeval", "natural", "lifecycle", "latency")
SIM_PROFILES = ("observed", "fast", "none")
LOCOMO_RUNS = (
    LocomoRun("records", SearchMode.CHUNKS),
    LocomoRun("records", SearchMode.HYBRID),
    LocomoRun("transcripts", SearchMode.MEMORIES),
    LocomoRun("transcripts", SearchMode.HYBRID),
)


@dataclass(frozen=True, slots=True)
class BenchConfig:
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    locomo: Path | None = DEFAULT_LOCOMO
    prefeval: Path | None = DEFAULT_PREFEVAL
    natural: Path | None = DEFAULT_NATURAL
    workloads: tuple[str, ...] = WORKLOADS
    out_dir: Path = Path("bench-report")
    seed: int = 7
    sim_profile: str = "observed"
    smoke: bool = False
    command: str = "factledger-lab bench"
    locomo_runs: tuple[LocomoRun, ...] = LOCOMO_RUNS
    locomo_conversations: int | None = None  # None: all ten
    locomo_questions: int | None = None  # per conversation; None: all
    prefeval_per_topic: int | None = None
    natural_subjects: int | None = None  # None: every subject of the set
    prefeval_mode: SearchMode = SearchMode.HYBRID
    lifecycle_subjects: int = 40
    lifecycle_budgets: int = 4
    latency_local: LatencySizes = field(default_factory=LatencySizes)
    latency_remote: LatencySizes = field(
        default_factory=lambda: LatencySizes(
            corpus=120, sequential=60, visibility=5, budgeted=200, agents=16, per_agent=10
        )
    )
    # Remote engines pay HTTP round trips (and the local server spec-checks each request), so
    # their quality workloads run on a stated subset; the report shows each n.
    remote_prefeval_per_topic: int | None = 5
    remote_locomo_conversations: int | None = 2
    # The extractor under the backends' memories: `rule` (as the lab ran before ADR 0125),
    # `learned` (the product's default, ADR 0119) or `learned-sentences` (ADR 0125).
    extractor: str = "rule"


def smoke_config(base: BenchConfig) -> BenchConfig:
    """A run of seconds: one conversation's first questions, a few subjects, tiny samples."""
    tiny = LatencySizes(corpus=12, sequential=10, visibility=1, budgeted=10, agents=2, per_agent=5)
    return BenchConfig(
        backends=base.backends,
        locomo=base.locomo,
        prefeval=base.prefeval,
        natural=base.natural,
        workloads=base.workloads,
        out_dir=base.out_dir,
        seed=base.seed,
        sim_profile="fast" if base.sim_profile == "observed" else base.sim_profile,
        smoke=True,
        command=base.command,
        locomo_conversations=1,
        locomo_questions=20,
        prefeval_per_topic=3,
        natural_subjects=2,
        lifecycle_subjects=2,
        lifecycle_budgets=2,
        latency_local=tiny,
        latency_remote=tiny,
        remote_prefeval_per_topic=1,
        remote_locomo_conversations=1,
        extractor=base.extractor,
    )
