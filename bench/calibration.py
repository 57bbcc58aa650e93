"""Calibration of the packaged sentence models: labelled pairs, the fit, held-out figures.

Pairs (ADR 0023):
- LoCoMo (read from its path, never copied): each answerable question (categories 1-4)
  against the observations (facts) its evidence turns gave, as relevant, and
  `NEGATIVES` other observations of the same conversation, as irrelevant. The speakers'
  names become "they" in both: our facts are stored about a subject without their name, and
  a name shared by question and fact lifts every cosine of a conversation alike;
- our own set (`models/calibration/own_pairs.jsonl`): questions in an agent's wording against
  a subject's facts, several sharing no keyword with the fact that answers them.

Whole conversations (and subjects of our set) are held out: the table is fitted on the rest
and precision and recall at the default threshold are measured on pairs it never saw.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factledger.adapters.embedding.onnx.calibration_tables import OWN_PAIRS, read_pairs
from factledger.application.memory.calibration import (
    Calibration,
    FusedFit,
    LabelledPair,
    Retrieval,
    fit_fused,
    fit_logistic,
    precision_recall,
)
from factledger.application.memory.lexical import LEXICAL_WEIGHT
from factledger.application.memory.ports import Embedder
from factledger.application.memory.scoring import keyword_tokens
from factledger.bench.calibration_features import pair_features
from factledger.bench.calibration_scores import backend_scores
from factledger.bench.locomo import normalise_evidence

THRESHOLD = 0.55  # the product's default (RecallPolicy.threshold)
NEGATIVES = 4  # irrelevant facts drawn per LoCoMo question
HELD_OUT_CONVERSATIONS = 3  # the last conversations of the file
HELD_OUT_OWN = frozenset({"own-2"})
ADVERSARIAL = 5  # LoCoMo's unanswerable category


def locomo_pairs(path: Path, *, seed: int = 7) -> list[LabelledPair]:
    raw: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    pairs: list[LabelledPair] = []
    for conversation in raw:
        names = _speakers(conversation)
        facts = [(_anonymous(text, names), ids) for text, ids in _observations(conversation)]
        known = {dia for _, ids in facts for dia in ids}
        for qa in conversation["qa"]:
            if qa.get("category") == ADVERSARIAL:
                continue
            evidence = normalise_evidence([str(e) for e in qa.get("evidence", [])], known)
            relevant = [text for text, ids in facts if ids & evidence]
            if not relevant:
                continue
            others = [text for text, ids in facts if not ids & evidence]
            group, question = str(conversation["sample_id"]), _anonymous(qa["question"], names)
            pairs += [LabelledPair(question, text, True, group) for text in relevant]
            drawn = rng.sample(others, min(NEGATIVES, len(others)))
            pairs += [LabelledPair(question, text, False, group) for text in drawn]
    return pairs


def _speakers(conversation: dict[str, Any]) -> re.Pattern[str]:
    turns = conversation["conversation"]
    names = [re.escape(str(turns[key])) for key in ("speaker_a", "speaker_b")]
    return re.compile(rf"\b(?:{'|'.join(names)})(?:'s)?\b")


def _anonymous(text: str, names: re.Pattern[str]) -> str:
    return names.sub(lambda m: "their" if m.group().endswith("'s") else "they", text)


def _observations(conversation: dict[str, Any]) -> list[tuple[str, frozenset[str]]]:
    facts: list[tuple[str, frozenset[str]]] = []
    for session in conversation["observation"].values():
        for items in session.values():
            for text, ids in items:
                facts.append((str(text), frozenset([ids] if isinstance(ids, str) else ids)))
    return facts


def held_out(pairs: Sequence[LabelledPair]) -> frozenset[str]:
    """The groups kept out of the fit: the last LoCoMo conversations and one subject of ours."""
    locomo = list(dict.fromkeys(p.group for p in pairs if not p.group.startswith("own-")))
    return frozenset(locomo[-HELD_OUT_CONVERSATIONS:]) | HELD_OUT_OWN


def is_own(pair: LabelledPair) -> bool:
    return pair.group.startswith("own-")


def no_shared_keyword(pair: LabelledPair) -> bool:
    return not set(keyword_tokens(pair.question)) & set(keyword_tokens(pair.fact))


@dataclass(frozen=True, slots=True)
class ModelCalibration:
    """One model's fit and its figures on held-out pairs, raw cosine against calibrated."""

    model_id: str
    calibration: Calibration
    fit_pairs: int
    raw: dict[str, Retrieval]  # by held-out set name
    calibrated: dict[str, Retrieval]
    # the same fit pairs on cosine and keyword coverage apart: the lexical weight they give
    fused: FusedFit
    # the table the package ships, on today's scores: a scoring change since its fit shows here
    packaged: Calibration | None = None
    packaged_figures: dict[str, Retrieval] = field(default_factory=dict)


async def calibrate_model(
    embedder: Embedder,
    pairs: Sequence[LabelledPair],
    *,
    threshold: float = THRESHOLD,
    packaged: Calibration | None = None,
) -> ModelCalibration:
    """Fits the model's table on the fit part of `pairs` and measures it on the held-out part,
    beside raw cosine and beside `packaged` (the table in use) on the same scores."""
    scores = await backend_scores(embedder, pairs)
    out = held_out(pairs)
    fit = [(s, p) for s, p in zip(scores, pairs, strict=True) if p.group not in out]
    calibration = fit_logistic([s for s, _ in fit], [p.relevant for _, p in fit])
    features = await pair_features(embedder, pairs)
    fit_features = [(f, p) for f, p in zip(features, pairs, strict=True) if p.group not in out]
    fused = fit_fused(
        [cosine for (cosine, _), _ in fit_features],
        [held for (_, held), _ in fit_features],
        [p.relevant for _, p in fit_features],
    )
    tests = [(s, p) for s, p in zip(scores, pairs, strict=True) if p.group in out]
    sets = {
        "LoCoMo held out": [(s, p) for s, p in tests if not p.group.startswith("own-")],
        "own held out": [(s, p) for s, p in tests if p.group.startswith("own-")],
        # positives sharing no keyword with their fact, with every negative of their questions
        "own, no shared keyword (2 of 3 subjects in the fit)": _no_keyword_questions(
            [(s, p) for s, p in zip(scores, pairs, strict=True) if p.group.startswith("own-")]
        ),
    }
    raw, calibrated, in_use = {}, {}, {}
    for name, rows in sets.items():
        labels = [p.relevant for _, p in rows]
        raw[name] = precision_recall([s for s, _ in rows], labels, threshold)
        mapped = [calibration.relevance(s) for s, _ in rows]
        calibrated[name] = precision_recall(mapped, labels, threshold)
        if packaged is not None:
            shipped = [packaged.relevance(s) for s, _ in rows]
            in_use[name] = precision_recall(shipped, labels, threshold)
    return ModelCalibration(
        embedder.model_id, calibration, len(fit), raw, calibrated, fused, packaged, in_use
    )


def _no_keyword_questions(
    rows: list[tuple[float, LabelledPair]],
) -> list[tuple[float, LabelledPair]]:
    questions = {p.question for _, p in rows if p.relevant and no_shared_keyword(p)}
    return [(s, p) for s, p in rows if p.question in questions]


def all_pairs(locomo: Path, *, seed: int = 7) -> list[LabelledPair]:
    return [*locomo_pairs(locomo, seed=seed), *read_pairs(OWN_PAIRS)]


# Which score each backend serves: the self-hosted ones go through `CalibratedMemoryBackend`;
# Supermemory's score is its own service's similarity, passed through as it comes.
BACKEND_SCALES = {"in_memory": "after", "pgvector": "after", "supermemory": "before (own scale)"}


def render(results: Sequence[ModelCalibration], *, threshold: float = THRESHOLD) -> str:
    scales = ", ".join(f"{backend}: {scale}" for backend, scale in BACKEND_SCALES.items())
    lines = [
        f"Calibration: precision / recall at threshold {threshold} on held-out pairs",
        f"(before = raw cosine, after = calibrated relevance; backends serve {scales})",
        "(packaged table = the table the package ships, on the same scores; after = this fit)",
        "",
        "| model | set | pairs (relevant) | before: P / R | packaged table: P / R | after: P / R |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        for name, raw in r.raw.items():
            cal = r.calibrated[name]
            in_use = r.packaged_figures.get(name)
            lines.append(
                f"| {r.model_id} | {name} | {raw.pairs} ({raw.relevant}) "
                f"| {_pr(raw)} | {_pr(in_use) if in_use else 'none'} | {_pr(cal)} |"
            )
    lines += [
        "",
        "| model | slope | intercept | raw score at relevance 0.55 (packaged table) | fit pairs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in results:
        c = r.calibration
        packaged_raw = f"{r.packaged.raw_at(threshold):.3f}" if r.packaged else "none"
        lines.append(
            f"| {r.model_id} | {c.slope:.3f} | {c.intercept:.3f} | {c.raw_at(threshold):.3f} "
            f"({packaged_raw}) | {r.fit_pairs} |"
        )
    lines += [
        "",
        "Fitted on cosine and keyword coverage apart (ADR 0040): the lexical weight the pairs "
        f"give (memories mode serves {LEXICAL_WEIGHT})",
        "",
        "| model | lexical weight | slope | intercept |",
        "| --- | --- | --- | --- |",
    ]
    for r in results:
        f = r.fused
        lines.append(
            f"| {r.model_id} | {f.lexical_weight:.3f} | {f.calibration.slope:.3f} "
            f"| {f.calibration.intercept:.3f} |"
        )
    return "\n".join(lines)


def _pr(figures: Retrieval) -> str:
    precision = f"{figures.precision:.2f}" if figures.kept else "none kept"
    return f"{precision} / {figures.recall:.2f}"
