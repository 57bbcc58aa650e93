"""The Markdown report: one table per workload, backends side by side, references beside."""

from __future__ import annotations

from typing import Any

from factledger.bench.locomo import CATEGORY_NAMES
from factledger.bench.metrics import KS
from factledger.bench.natural.fresh import WORDING_SETS
from factledger.bench.report.files import (
    LATENCY_ROWS,
    LIFECYCLE_ROWS,
    LOCOMO_BM25_RECALL,
    LOCOMO_BM25_RECALL10_BY_CATEGORY,
    LOCOMO_TARGET,
    backend_label,
    fmt,
    md_table,
)

Json = dict[str, Any]


def render_markdown(report: Json) -> str:
    meta = report["meta"]
    lines = [
        f"# factledger-lab bench: {meta['started_at']}",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Total wall time: {meta['duration_s']} s, CPU time of the bench process "
        f"{meta.get('cpu_s', 'n/a')} s{' (smoke run)' if meta['smoke'] else ''}.",
        "",
        *_setup(meta),
        *_locomo(report["backends"]),
        *_prefeval(report["backends"]),
        *_natural(report["backends"]),
        *_lifecycle(report["backends"]),
        *_latency(report["backends"], meta),
        *calibration_section(report.get("calibration")),
        *_notes(report["backends"]),
        *[f"![{name}]({name})" for name in meta.get("plots", [])],
    ]
    return "\n".join(lines)


def calibration_section(calibration: Json | None) -> list[str]:
    if not calibration:
        return []
    return ["## Calibrated relevance (ADR 0023)", "", calibration["markdown"], ""]


def _setup(meta: Json) -> list[str]:
    machine = meta["machine"]
    rows = [
        [
            "machine",
            f"{machine['cpu_model']}, {machine['cores']} cores, "
            f"{machine['memory_gib']} GiB, {machine['os']}, Python {machine['python']}; "
            f"load average {machine.get('load_average_at_start')} at start, "
            f"{machine.get('load_average_at_end')} at end",
        ],
        ["embedder", meta["embedder"]],
        ["extractor", meta["extractor"]],
        ["simulated Supermemory latency", meta["sim_latency"]],
        ["seed", str(meta["seed"])],
        ["versions", ", ".join(f"{k} {v}" for k, v in meta["versions"].items())],
    ]
    return ["## Setup", "", *md_table(["", ""], rows)]


def _locomo(backends: Json) -> list[str]:
    ref = LOCOMO_BM25_RECALL
    head = [
        "backend",
        "ingestion/search",
        "n",
        *[f"recall@{k}" for k in KS],
        "hit@10",
        "all@10",
        "MRR",
        "hits without source turn",
        "recall@10 dev (1-6) / held out (7-10)",
    ]
    rows = [
        ["BM25 reference (README)", "turns", "1536", *[fmt(ref[str(k)]) for k in KS], *[""] * 5]
    ]
    cat_rows = [
        [
            "BM25 reference (README)",
            "turns",
            *[fmt(v) for v in LOCOMO_BM25_RECALL10_BY_CATEGORY.values()],
        ]
    ]
    for name, result in backends.items():
        for label, scores in (result.get("locomo") or {}).items():
            if not isinstance(scores, dict):
                continue
            o = scores["overall"]
            rows.append(
                [
                    backend_label(name, result),
                    label,
                    str(o["n"]),
                    *[fmt(o[f"recall@{k}"]) for k in KS],
                    fmt(o["hit@10"]),
                    fmt(o["all@10"]),
                    fmt(o["mrr"]),
                    fmt(o.get("unattributed_hits")),
                    " / ".join(
                        fmt(scores.get(f"part {part}", {}).get("recall@10"))
                        for part in ("dev", "heldout")
                    ),
                ]
            )
            cat_rows.append(
                [
                    backend_label(name, result),
                    label,
                    *[
                        fmt(scores.get(f"c{c} {CATEGORY_NAMES[c]}", {}).get("recall@10"))
                        for c in CATEGORY_NAMES
                    ],
                ]
            )
    categories = [f"c{c} {n} recall@10" for c, n in CATEGORY_NAMES.items()]
    return [
        "## LoCoMo retrieval (evidence turns)",
        "",
        "Categories use the numeric mapping of the dataset README: 1 multi-hop, 2 temporal, "
        f"3 open-domain, 4 single-hop (5 is not scored). Target for the self-hosted backend: "
        f"recall@10 above the BM25 reference {LOCOMO_TARGET}. `records` stores one verbatim "
        "record per turn; `transcripts` ingests each session once per speaker and scores facts "
        "through their source turns.",
        "",
        *md_table(head, rows),
        *md_table(["backend", "ingestion/search", *categories], cat_rows),
    ]


def _prefeval(backends: Json) -> list[str]:
    head = [
        "backend",
        "mode",
        "n",
        "said hit@1/3/10",
        "inferred strict hit@1/3/10",
        "inferred lenient hit@1/3/10",
        "gap said-strict @10",
        "gap said-lenient @10",
    ]
    rows = []
    for name, result in backends.items():
        p = result.get("prefeval")
        if not isinstance(p, dict):
            continue
        said, strict, lenient = (
            p[key]["overall"] for key in ("said", "inferred_strict", "inferred_lenient")
        )

        def triple(o: Json) -> str:
            return " / ".join(fmt(o[f"hit@{k}"]) for k in (1, 3, 10))

        rows.append(
            [
                backend_label(name, result),
                p["mode"],
                str(said["n"]),
                triple(said),
                triple(strict),
                triple(lenient),
                fmt(said["hit@10"] - strict["hit@10"]),
                fmt(said["hit@10"] - lenient["hit@10"]),
            ]
        )
    return [
        "## PrefEval: said vs inferred (cross-topic protocol)",
        "",
        "One record per preference (said) or per exchange message (inferred); x is placed at a "
        "seeded random position among the distractors. README BM25 floors (said hit@1/3/10): "
        "travel 0.98/1.00/1.00, shows 0.82/0.97/0.98; inferred strict about 0.04-0.16, lenient "
        "0.20-0.82. Our BM25 reference returns only items sharing a word with the question, "
        "which is why its said figures sit far below the README's.",
        "",
        *md_table(head, rows),
    ]


def _natural(backends: Json) -> list[str]:
    head = [
        "backend",
        "scores",
        "part",
        "n",
        "notes-hit@3",
        "ranked-hit@3 (no threshold)",
        "paraphrases",
        "paraphrase notes-hit@3",
        "stale as current",
        "cross-subject",
        "notes per question (answering)",
        "no answer: wrong-note rate",
    ]
    rows = []
    for name, result in backends.items():
        natural = result.get("natural")
        if not isinstance(natural, dict):
            continue
        wordings = [("set", natural), *((name, natural.get(name)) for name in WORDING_SETS)]
        for wording, scores in wordings:
            if isinstance(scores, dict):
                rows.extend(_natural_rows(backend_label(name, result), natural, wording, scores))
    return [
        "## Natural questions (generated multi-session subjects)",
        "",
        "An agent's questions over made-up subjects of three sessions each, some values "
        "superseded later; asked as per-turn recall asks (memories, threshold 0.55, the first "
        "three current facts are the notes). A paraphrase shares no keyword with the sentence "
        "holding its answer. The held-out subjects are asked in wordings of their own. Stale as "
        'current and cross-subject count notes, and must be 0. "fresh", "briefing" and "phone" '
        "rows ask every subject the wordings of `tests/data/fresh_natural_wordings.yaml`, "
        "`tests/data/briefing_natural_wordings.yaml` and `tests/data/phone_natural_wordings.yaml` "
        "(written apart from the generator; their "
        'held-out parts are held-out wordings). "no answer" is the share of '
        "questions that still get a note when every fact holding the answer is left out of the "
        "hits (ADR 0036: it must not rise).",
        "",
        *md_table(head, rows),
    ]


def _natural_rows(label: str, natural: Json, wording: str, scores: Json) -> list[list[str]]:
    no_answer = natural.get("no_answer" if wording == "set" else f"{wording}_no_answer") or {}
    rows = []
    for part in ("all", "dev", "heldout"):
        o = scores[part]
        wrong = no_answer.get(part, {}).get("wrong_note_rate")
        rows.append(
            [
                label,
                f"{natural.get('scale', 'raw')}, {wording}",
                part,
                str(o["n"]),
                fmt(o["notes_hit@3"]),
                fmt(o["ranked_hit@3"]),
                str(o["paraphrases"]),
                fmt(o["paraphrase_hit@3"]),
                str(o["stale_as_current"]),
                str(o["cross_subject"]),
                f"{o.get('notes_per_question', '-')} ({fmt(o.get('notes_answering'))})",
                fmt(wrong) if wrong is not None else "-",
            ]
        )
    return rows


def _lifecycle(backends: Json) -> list[str]:
    names = [n for n, r in backends.items() if isinstance(r.get("lifecycle"), dict)]
    rows = [
        [label, *[fmt(backends[n]["lifecycle"][key]) for n in names]]
        for key, label in LIFECYCLE_ROWS
    ]
    return [
        "## Lifecycle correctness (generated, seeded)",
        "",
        "Counts over all subjects; a value is recognised by its made-up name in a hit's text.",
        "",
        *md_table(["", *[backend_label(n, backends[n]) for n in names]], rows),
    ]


def _latency(backends: Json, meta: Json) -> list[str]:
    names = [n for n, r in backends.items() if isinstance(r.get("latency"), dict)]
    rows = [
        [label, *[fmt(backends[n]["latency"].get(key)) for n in names]]
        for key, label in LATENCY_ROWS
    ]
    return [
        "## Latency and robustness",
        "",
        "Recall is the product's per-turn `Recall` (1 s budget, memories, threshold 0.55, "
        "limit 3) with no ledger behind it, on one subject holding synthetic notes (records) "
        "and, where the backend extracts, transcripts with facts; query embedding included. "
        "A recall answered `degraded` (timeout or backend error) failed open. Raw search is "
        "`search` in hybrid mode, limit 10. Throughput: concurrent agents recalling back to "
        f"back. Simulated Supermemory latency: {meta['sim_latency']}.",
        "",
        *md_table(["", *[backend_label(n, backends[n]) for n in names]], rows),
    ]


def _notes(backends: Json) -> list[str]:
    rows = []
    for name, result in backends.items():
        notes = [f"unavailable: {result['unavailable']}"] if "unavailable" in result else []
        notes += [f"{k} skipped: {v}" for k, v in result.get("skipped", {}).items()]
        notes += [f"{k} failed: {v}" for k, v in result.get("errors", {}).items()]
        seconds = ", ".join(f"{k} {v} s" for k, v in result.get("seconds", {}).items())
        rows.append([name, seconds or "-", "; ".join(notes) or "-"])
    return ["## Run notes", "", *md_table(["backend", "wall time per workload", "notes"], rows)]
