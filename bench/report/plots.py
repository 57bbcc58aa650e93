"""PNG plots of the report (matplotlib, headless): recall curves, latency, said vs inferred."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from factledger.adapters.extras import Extra, MissingExtraError
from factledger.bench.metrics import KS
from factledger.bench.report.files import LOCOMO_BM25_RECALL, backend_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Json = dict[str, Any]


def _figure() -> Figure:
    """A 7 x 4.5 inch figure; matplotlib comes from the `bench` extra, imported on first use."""
    try:
        # The object API (no pyplot): no global figure state and no GUI backend: headless.
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtraError("the benchmark's plots", Extra.BENCH) from exc
    return Figure(figsize=(7, 4.5))


def plot_locomo(backends: Json, path: Path) -> bool:
    figure = _figure()
    axes = figure.subplots()
    ref = LOCOMO_BM25_RECALL
    axes.plot(KS, [ref[str(k)] for k in KS], "k--", label="BM25 reference (README)")
    drawn = False
    for name, result in backends.items():
        for label, scores in (result.get("locomo") or {}).items():
            if isinstance(scores, dict):
                overall = scores["overall"]
                values = [overall[f"recall@{k}"] for k in KS]
                axes.plot(KS, values, marker="o", label=f"{backend_label(name, result)} {label}")
                drawn = True
    axes.set(xlabel="k", ylabel="evidence recall@k", title="LoCoMo evidence recall", ylim=(0, 1))
    axes.set_xticks(KS)
    axes.legend(fontsize=7)
    return _save(figure, path, drawn)


def plot_latency(backends: Json, path: Path) -> bool:
    names = [n for n, r in backends.items() if isinstance(r.get("latency"), dict)]
    figure = _figure()
    axes = figure.subplots()
    width = 0.25
    for offset, key in enumerate(("recall_p50_ms", "recall_p95_ms", "recall_p99_ms")):
        values = [backends[n]["latency"].get(key) or 0.0 for n in names]
        positions = [i + (offset - 1) * width for i in range(len(names))]
        axes.bar(positions, values, width, label=key.removeprefix("recall_").removesuffix("_ms"))
    axes.set_xticks(range(len(names)), [backend_label(n, backends[n]) for n in names], fontsize=8)
    axes.set(ylabel="ms (log scale)", title="Recall latency through the port")
    axes.set_yscale("log")
    axes.legend()
    return _save(figure, path, bool(names))


def plot_prefeval(backends: Json, path: Path) -> bool:
    names = [n for n, r in backends.items() if isinstance(r.get("prefeval"), dict)]
    figure = _figure()
    axes = figure.subplots()
    width = 0.25
    for offset, key in enumerate(("said", "inferred_strict", "inferred_lenient")):
        values = [backends[n]["prefeval"][key]["overall"]["hit@10"] for n in names]
        positions = [i + (offset - 1) * width for i in range(len(names))]
        axes.bar(positions, values, width, label=key)
    axes.set_xticks(range(len(names)), [backend_label(n, backends[n]) for n in names], fontsize=8)
    axes.set(ylabel="hit@10", title="PrefEval: said vs inferred", ylim=(0, 1))
    axes.legend()
    return _save(figure, path, bool(names))


def write_plots(backends: Json, out_dir: Path) -> list[Path]:
    """Draws each plot that has data; returns the files written."""
    plots = {
        "locomo_recall.png": plot_locomo,
        "latency.png": plot_latency,
        "prefeval.png": plot_prefeval,
    }
    return [out_dir / name for name, plot in plots.items() if plot(backends, out_dir / name)]


def _save(figure: Figure, path: Path, drawn: bool) -> bool:
    if drawn:
        figure.tight_layout()
        figure.savefig(path, dpi=110)
    return drawn
