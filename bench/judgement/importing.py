"""Imports labelled training conversations into the lab's corpus: copies each readable
`cases-*.yaml` of a writer's directory verbatim and reports what validation drops."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

from factledger.bench.judgement.conversations import load_training_cases, read_cases_file


def import_conversations(source: Path, into: Path) -> dict[str, object]:
    """Copies `source`'s readable case files into `into` (replacing older copies of the same
    name; a chunk still being written, which does not parse yet, is left out) and returns the
    counts: cases, labels kept, labels dropped by reason."""
    into.mkdir(parents=True, exist_ok=True)
    copied, skipped = [], []
    for path in sorted(source.glob("cases-*.yaml")):
        if read_cases_file(path):
            shutil.copyfile(path, into / path.name)
            copied.append(path.name)
        else:
            skipped.append(path.name)
    loaded = load_training_cases([into])
    sessions = [s for c in loaded.cases for s in c.sessions]
    return {
        "copied": copied,
        "not_readable": skipped + loaded.unreadable,
        "cases": len(loaded.cases),
        "sessions": len(sessions),
        "proposals": sum(len(s.proposals) for s in sessions),
        "not_proposed": sum(len(s.not_proposed) for s in sessions),
        "forget_requests": sum(len(s.forgets) for s in sessions),
        "questions": sum(len(s.questions) for s in sessions),
        "dropped": dict(loaded.dropped),
    }


def import_replies(source: Path, into: Path) -> dict[str, object]:
    """Copies `source`'s `replies-*.yaml` files into `into` once each parses as labelled
    (question, reply) items (yes / no / neither, ids unique over the files); a file that
    does not (one still being written) is left out and named. Returns the counts by label
    and language."""
    import yaml

    from factledger.bench.evalsets.cases import parse_answers

    into.mkdir(parents=True, exist_ok=True)
    copied, skipped = [], []
    ids: set[str] = set()
    labels: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    for path in sorted(source.glob("replies-*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or []
            items = parse_answers(raw)
        except (yaml.YAMLError, KeyError, TypeError):
            skipped.append(path.name)
            continue
        fresh = {a.id for a in items}
        if (
            not items
            or len(fresh) < len(items)
            or fresh & ids
            or any(a.label not in ("yes", "no", "neither") or not a.reply.strip() for a in items)
        ):
            skipped.append(path.name)
            continue
        ids |= fresh
        labels.update(a.label for a in items)
        languages.update(str(r.get("language", "?")) for r in raw)
        shutil.copyfile(path, into / path.name)
        copied.append(path.name)
    return {
        "copied": copied,
        "not_readable": skipped,
        "pairs": sum(labels.values()),
        "labels": dict(labels),
        "not_english": sum(n for lang, n in languages.items() if lang != "en"),
        "languages": len(languages),
    }
