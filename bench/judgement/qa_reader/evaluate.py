"""The reader scored at the line and session level, beside the shipped field reader on the
same lines: the training conversations' kept-out cases (one in eight by a hash of the id,
never trained on) and the blind sets' dev halves (checking only, never fitting)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import torch

from factledger.adapters.judgement.qa_reader.decode import answers
from factledger.api.bootstrap.judgement import learned_judge
from factledger.bench.judgement.bert import HEAD_WIDTH
from factledger.bench.judgement.conversations import load_training_cases
from factledger.bench.judgement.qa_reader.fields_pass import (
    FieldAsked,
    FieldsTokens,
    fields_of_lines,
)
from factledger.bench.judgement.qa_reader.fields_train import line_inputs, read_lines
from factledger.bench.judgement.qa_reader.model import FieldsReader, QaReader
from factledger.bench.judgement.qa_reader.pairs import FLAGS, LineAsked, split_pairs, subject_lines
from factledger.bench.judgement.qa_reader.questions import question_for
from factledger.bench.judgement.qa_reader.scoring import (
    GoldSpan,
    Read,
    figures,
    proposed,
    score_keywords,
    score_one_to_one,
    score_spans,
)
from factledger.bench.judgement.qa_reader.sessions import (
    Session,
    blind_sessions,
    kept_out_sessions,
)
from factledger.bench.judgement.qa_reader.tokens import Encoded, PairTokens, load_tokenizer
from factledger.domain.transcript import Message, Role

FLOORS = (-4.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0)
CANDIDATE_FLOOR = -1e9  # every pair's best answer is a candidate; floors and ranks choose
TOP_SHARES = (0.01, 0.05, 0.1, 0.2)  # also scored: the reader's most confident answers


Item = tuple[LineAsked, str, bool, Encoded]  # a line, the field asked, a list field?, a window


def _items(sessions: Sequence[Session], tokens: PairTokens) -> list[Item]:
    return [
        (asked, f, s.lists[f], window)
        for s in sessions
        for asked in subject_lines(s.case_id, s.index, s.lines)
        for f in s.fields
        for window in tokens.encode(question_for(f), asked.text, asked.agent_before)
    ]


def _inputs(chunk: Sequence[Item]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    width = max(len(c[3].ids) for c in chunk)
    ids = torch.zeros((len(chunk), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    attention = torch.zeros_like(ids)
    for row, (_, _, _, e) in enumerate(chunk):
        ids[row, : len(e.ids)] = torch.tensor(e.ids)
        types[row, : len(e.ids)] = torch.tensor(e.types)
        attention[row, : len(e.ids)] = 1
    return ids, types, attention


def _reads_of(item: Item, start: torch.Tensor, end: torch.Tensor) -> list[Read]:
    asked, f, many, e = item
    n = len(e.ids)
    found = answers(
        start[:n].numpy(), end[:n].numpy(), e.first_line_token, e.offsets, asked.text,
        margin=CANDIDATE_FLOOR, many=many,
    )  # fmt: skip
    return [
        Read(asked.case_id, asked.session, asked.line, f, a.start, a.end,
             asked.text[a.start : a.end], a.margin)
        for a in found
    ]  # fmt: skip


def read_all(
    reader: QaReader, tokens: PairTokens, sessions: Sequence[Session], batch: int = 64
) -> list[Read]:
    """Every field of every subject line, answered (candidates down to CANDIDATE_FLOOR)."""
    items = sorted(_items(sessions, tokens), key=lambda item: len(item[3].ids))
    reads: list[Read] = []
    reader.eval()
    with torch.no_grad():
        for begin in range(0, len(items), batch):
            chunk = items[begin : begin + batch]
            start, end, _ = reader(*_inputs(chunk))
            for row, item in enumerate(chunk):
                reads.extend(_reads_of(item, start[row], end[row]))
    return _best_per_window_overlap(reads)


def read_sessions(reader: QaReader, tokenizer: Path, sessions: Sequence[Session],
                  max_tokens: int) -> list[Read]:  # fmt: skip
    """As the reader was trained: a pass per field (QaReader) or per line (FieldsReader)."""
    loaded = load_tokenizer(tokenizer)
    if not isinstance(reader, FieldsReader):
        return read_all(reader, PairTokens(loaded, max_tokens or 96), sessions)
    lines = [
        (asked, [FieldAsked(f, s.lists[f], (), ()) for f in s.fields])
        for s in sessions
        for asked in subject_lines(s.case_id, s.index, s.lines)
    ]
    reads = read_lines(
        reader, FieldsTokens(loaded, max_tokens or 128), lines, floor=CANDIDATE_FLOOR
    )
    return _best_per_window_overlap(reads)


def _best_per_window_overlap(reads: Sequence[Read]) -> list[Read]:
    """Windows overlap: an answer found twice is kept once, at its higher margin."""
    best: dict[tuple[str, int, int, str, int, int], Read] = {}
    for r in reads:
        key = (r.case_id, r.session, r.line, r.field, r.start, r.end)
        if key not in best or r.margin > best[key].margin:
            best[key] = r
    return list(best.values())


def current_reads(sessions: Sequence[Session]) -> list[Read]:
    """The shipped heads' field reader (what the learned extractor proposes from), on the
    same sessions: each clause it reads as stating a field, with its probability."""
    judge = learned_judge(None, None)
    reads = []
    for s in sessions:
        transcript = [
            Message(Role.SUBJECT if role == "subject" else Role.AGENT, text)
            for role, text in s.lines
        ]
        found = asyncio.run(judge.field_statements(transcript, list(s.fields)))
        for statement in found:
            text = s.lines[statement.message_index][1]
            at = max(0, text.find(statement.clause))
            reads.append(
                Read(
                    s.case_id,
                    s.index,
                    statement.message_index,
                    statement.field,
                    at,
                    at + len(statement.clause),
                    statement.clause,
                    statement.p,
                )
            )
    return reads


def _lists(sessions: Sequence[Session]) -> dict[str, bool]:
    return {f: many for s in sessions for f, many in s.lists.items()}


def _ranked(reads: Sequence[Read], gold: Sequence[GoldSpan]) -> dict[str, object]:
    """Line-level figures of the reader's most confident answers, whatever their margin."""
    margins = sorted((r.margin for r in reads), reverse=True)
    out: dict[str, object] = {}
    for share in TOP_SHARES:
        if margins:
            floor = margins[max(0, int(share * len(margins)) - 1)]
            kept = [r for r in reads if r.margin >= floor]
            out[f"top {share:.0%} (margin >= {floor:.2f})"] = score_spans(kept, gold)
    return out


def _sweep(
    reads: Sequence[Read],
    sessions: Sequence[Session],
    score: object,
    gold: object,
    floors: Sequence[float],
) -> dict[str, object]:
    lists = _lists(sessions)
    return {str(f): score(proposed(reads, lists, f), gold) for f in floors}  # type: ignore[operator]


def evaluate(
    weights: Path | None,
    *,
    tokenizer: Path,
    corpora: Sequence[Path],
    blind: Sequence[Path],
    current: bool,
    max_tokens: int,
) -> dict[str, object]:
    """Figures per set: the reader's at every floor (`weights`), the shipped field reader's
    (`current`), on the same sessions."""
    reader = None if weights is None else load_reader(weights)
    out: dict[str, object] = {}
    sessions, spans = kept_out_sessions(corpora)
    if reader is not None:
        reads = read_sessions(reader, tokenizer, sessions, max_tokens)
        out["kept_out line level"] = {
            str(f): score_spans([r for r in reads if r.margin >= f], spans) for f in FLOORS
        }
        out["kept_out session level"] = _sweep(reads, sessions, score_one_to_one, spans, FLOORS)
        out["kept_out line level, most confident share"] = _ranked(reads, spans)
    if current:
        now = current_reads(sessions)
        out["kept_out line level, shipped reader"] = score_spans(now, spans)
        out["kept_out session level, shipped reader"] = _sweep(
            now, sessions, score_one_to_one, spans, (0.0,)
        )
    for directory in blind:
        sessions_b, keywords = blind_sessions(directory)
        name = f"{directory.parent.name}/{directory.name}"
        if reader is not None:
            reads_b = read_sessions(reader, tokenizer, sessions_b, max_tokens)
            out[name] = _sweep(reads_b, sessions_b, score_keywords, keywords, FLOORS)
        if current:
            out[f"{name}, shipped reader"] = _sweep(
                current_reads(sessions_b), sessions_b, score_keywords, keywords, (0.0,)
            )
    return out


def load_reader(weights: Path) -> QaReader:
    state = torch.load(weights)
    layers = 1 + max(int(k.split(".")[1]) for k in state if k.startswith("layers."))
    vocab, width = state["words.weight"].shape
    kind = FieldsReader if "start_of.weight" in state else QaReader
    reader = kind(vocab=vocab, width=width, layers=layers, heads=width // HEAD_WIDTH)
    if isinstance(reader, FieldsReader) and "field_words_pooled" in state:
        reader.use_field_words()
    reader.load_state_dict(state)
    return reader


def flag_figures(
    reader: FieldsReader, tokenizer: Path, corpora: Sequence[Path], thresholds: Sequence[float]
) -> dict[str, object]:
    """The flags head (update, correction, hedged, inferred) on the kept-out cases' stated
    fields: per flag and threshold, how many it sets and how many of the labelled it finds."""
    _, held = split_pairs(load_training_cases(corpora).cases)
    tokens = FieldsTokens(load_tokenizer(tokenizer))
    rows: list[tuple[tuple[bool, ...], list[float]]] = []
    reader.eval()
    with torch.no_grad():
        for first, fields in fields_of_lines(held):
            for w in tokens.encode(fields, first.asked.text, first.asked.agent_before, None):
                x = line_inputs([w])
                _, _, flags = reader.read(
                    x["ids"], x["types"], x["attention"], x["markers"], x["pool"]
                )
                p = torch.sigmoid(flags[0]).tolist()
                rows += [(a.flags, p[f]) for f, a in enumerate(w.fields) if w.starts[f]]
    out: dict[str, object] = {"stated fields": len(rows)}
    for k, name in enumerate(FLAGS):
        gold = [g[k] for g, _ in rows]
        for t in thresholds:
            set_ = [q[k] >= t for _, q in rows]
            right = sum(a and b for a, b in zip(gold, set_, strict=True))
            out[f"{name} >= {t}"] = figures(right, sum(set_), right, sum(gold))
    return out
