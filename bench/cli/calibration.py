"""`factledger-lab bench calibration`, `factledger-lab embedder calibrate` and `factledger-lab bench
forget-mask` (ADR 0023)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from factledger.adapters.embedding.onnx.calibration_tables import (
    OWN_PAIRS,
    PACKAGED_TABLES,
    file_sha256,
    packaged_tables,
    read_pairs,
    table_entry,
    write_table,
)
from factledger.adapters.embedding.onnx.embedder import OnnxEmbedder
from factledger.adapters.embedding.onnx.model_files import OnnxModelFiles, OnnxPreset
from factledger.api.log_setup import configure_logging
from factledger.application.memory.calibration import (
    CalibrationFitError,
    fit_logistic,
    precision_recall,
)
from factledger.bench.calibration import (
    THRESHOLD,
    ModelCalibration,
    all_pairs,
    calibrate_model,
    held_out,
    is_own,
)
from factledger.bench.calibration import render as render_calibration
from factledger.bench.calibration_backends import BackendFigures, through_backends
from factledger.bench.calibration_scores import backend_scores
from factledger.bench.calibration_scores import questions as questions_of
from factledger.bench.config import DEFAULT_LOCOMO
from factledger.bench.forget_filter import render as render_forget_filter
from factledger.bench.forget_filter import run as run_forget_filter
from factledger.bench.forget_mask import render as render_forget_mask
from factledger.bench.forget_mask import run as run_forget_mask


def bench_calibration(
    locomo: Annotated[Path, typer.Option(help="LoCoMo's locomo10.json (never copied).")] = (
        DEFAULT_LOCOMO
    ),
    backends: Annotated[
        str, typer.Option(help="Backends searched with the held-out questions (comma-separated).")
    ] = "in-memory,pgvector,supermemory-sim",
    questions: Annotated[
        int, typer.Option(min=0, help="Held-out LoCoMo questions asked through each backend.")
    ] = 150,
    write_tables: Annotated[
        bool, typer.Option(help="Write the fitted tables into the package (maintainers).")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the drawn negatives.")] = 7,
) -> None:
    """Fit each packaged model's calibration on labelled pairs; print precision and recall at
    the default threshold on held-out pairs, raw cosine (before) and calibrated (after), then
    through each backend's search."""
    configure_logging(json_lines=False, level="WARNING")
    pairs = all_pairs(locomo, seed=seed)
    out = held_out(pairs)
    asked = [
        *questions_of([p for p in pairs if p.group in out and not is_own(p)], limit=questions),
        *questions_of([p for p in pairs if p.group in out and is_own(p)], limit=len(pairs)),
    ]
    names = [name.strip() for name in backends.split(",") if name.strip()]
    results, by_backend = [], []
    shipped = packaged_tables()
    for preset in OnnxPreset:
        files = OnnxModelFiles.preset(preset)
        embedder = OnnxEmbedder(files)
        packaged = shipped.get(files.model_sha256 or "")
        result = asyncio.run(calibrate_model(embedder, pairs, packaged=packaged))
        results.append(result)
        figures = asyncio.run(through_backends(embedder, result.calibration, asked, names))
        by_backend.append((result.model_id, figures))
    typer.echo(render_calibration(results))
    typer.echo("")
    typer.echo(render_backends(by_backend, questions=len(asked)))
    if write_tables:
        presets = [OnnxModelFiles.preset(p) for p in OnnxPreset]
        _write_packaged({f.model_sha256 or "": r for f, r in zip(presets, results, strict=True)})
        typer.echo(f"tables: {PACKAGED_TABLES}")


def render_backends(rows: list[tuple[str, list[BackendFigures]]], *, questions: int) -> str:
    lines = [
        f"Through each backend's search: {questions} held-out questions, memories mode, "
        f"threshold {THRESHOLD}",
        "",
        "| model | backend | score | pairs (relevant) | returned | precision | recall |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for model_id, figures in rows:
        for f in figures:
            r = f.figures
            lines.append(
                f"| {model_id} | {f.backend} | {f.scale} | {r.pairs} ({r.relevant}) | {r.kept} "
                f"| {r.precision:.2f} | {r.recall:.2f} |"
            )
    return "\n".join(lines)


def _write_packaged(results: dict[str, ModelCalibration]) -> None:
    tables = {
        sha: table_entry(
            r.calibration,
            model_id=r.model_id,
            fitted_on=f"{r.fit_pairs} pairs: LoCoMo observations (non-commercial data, not "
            "shipped) and factledger's own set",
            held_out={
                name: {"precision": round(f.precision, 3), "recall": round(f.recall, 3)}
                for name, f in r.calibrated.items()
            },
        )
        for sha, r in results.items()
    }
    body = {"threshold": THRESHOLD, "tables": tables}
    PACKAGED_TABLES.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")


def calibrate(
    model_dir: Annotated[
        Path, typer.Option(help="Your model directory: model.onnx and tokenizer.json.")
    ],
    pairs: Annotated[
        Path | None,
        typer.Option(help='JSON lines {"question", "fact", "relevant"}; default: our own set.'),
    ] = None,
) -> None:
    """Fit a calibration table for your own model and write it next to it (calibration.json),
    keyed by the model file's sha256."""
    labelled = read_pairs(pairs or OWN_PAIRS)
    files = OnnxModelFiles.from_directory(model_dir)
    embedder = OnnxEmbedder(files)
    # The scores the backends serve for these pairs (today their cosine), so the table maps
    # what recall will compare with the threshold.
    scores = asyncio.run(backend_scores(embedder, labelled))
    labels = [p.relevant for p in labelled]
    try:
        calibration = fit_logistic(scores, labels)
    except CalibrationFitError as exc:
        raise typer.BadParameter(str(exc), param_hint="--pairs") from exc
    fitted = precision_recall([calibration.relevance(s) for s in scores], labels, THRESHOLD)
    entry = table_entry(
        calibration,
        model_id=files.model_id,
        fitted_on=f"{len(labelled)} pairs",
        on_fit_pairs={"precision": round(fitted.precision, 3), "recall": round(fitted.recall, 3)},
    )
    target = write_table(model_dir, file_sha256(files.model), entry)
    typer.echo(
        f"wrote {target}: relevance {THRESHOLD} at raw cosine "
        f"{calibration.raw_at(THRESHOLD):.3f}; on the fit pairs precision "
        f"{fitted.precision:.2f}, recall {fitted.recall:.2f}"
    )


def bench_forget_mask(
    calls: Annotated[int, typer.Option(min=100, help="Timed reads per case.")] = 2000,
    sessions: Annotated[int, typer.Option(min=0, help="Sessions added to each subject.")] = 100,
) -> None:
    """Time the ledger read that makes forgetting immediate (recall's forget mask)."""
    configure_logging(json_lines=False, level="WARNING")
    typer.echo(render_forget_mask(run_forget_mask(calls=calls, extra_sessions=sessions)))


def bench_forget_filter(
    calls: Annotated[int, typer.Option(min=100, help="Timed turns per case.")] = 500,
    backends: Annotated[str, typer.Option(help="Comma-separated: in-memory, pgvector.")] = (
        "in-memory,pgvector"
    ),
) -> None:
    """Time recall's forget filter over one turn's hits (the check for notes repeating a
    forgotten value apart)."""
    configure_logging(json_lines=False, level="WARNING")
    chosen = tuple(b.strip() for b in backends.split(",") if b.strip())
    timings = asyncio.run(run_forget_filter(backends=chosen, calls=calls))
    typer.echo(render_forget_filter(timings))
