"""Rich renderings of ledger read models for the CLI (profile, versions, history, queue)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from rich.markup import escape
from rich.table import Table

from factledger.application.ledger.queries import (
    FieldDiff,
    FieldHistoryEntry,
    PendingChange,
    ProfileVersion,
    SessionEntry,
)
from factledger.domain.provenance import Actor


def _row(table: Table, *cells: str) -> None:
    """Cells hold user content: escape it, or rich reads "[forgotten]" as markup."""
    table.add_row(*(escape(cell) for cell in cells))


def _when(at: datetime | None) -> str:
    return "" if at is None else at.strftime("%Y-%m-%d %H:%M")


def _who(actor: Actor | None) -> str:
    return "" if actor is None else f"{actor.kind.value}:{actor.id}"


def profile_table(profile: ProfileVersion, title: str) -> Table:
    table = Table(title=f"{title} (version {profile.version}, {_when(profile.at)})")
    for column in (
        "field",
        "value",
        "condition",
        "origin",
        "proposed by",
        "confirmed by",
        "when",
        "evidence",
        "since v",
        "valid until",
    ):
        table.add_column(column)
    for name, f in profile.fields.items():
        _row(
            table,
            name,
            f.display,
            f.condition or "",
            f.origin.value,
            _who(f.proposed_by),
            _who(f.confirmed_by),
            _when(f.confirmed_at),
            "" if f.evidence is None else f'{f.evidence.session_id}: "{f.evidence.quote}"',
            str(f.version),
            _when(f.valid_until),
        )
    return table


def versions_table(versions: Sequence[ProfileVersion]) -> Table:
    table = Table(title="Profile versions (each retrievable as of its date)")
    for column in ("version", "as of", "cause", "fields"):
        table.add_column(column)
    for v in versions:
        fields = ", ".join(f"{n}={f.display}" for n, f in v.fields.items()) or "(empty)"
        _row(table, str(v.version), _when(v.at), v.cause, fields)
    return table


def history_table(entries: Sequence[FieldHistoryEntry], title: str) -> Table:
    table = Table(title=title)
    for column in (
        "field",
        "what",
        "value",
        "from",
        "until",
        "origin",
        "confirmed/asked by",
        "why",
    ):
        table.add_column(column)
    for h in entries:
        until = "" if h.until_version is None else f"v{h.until_version} {_when(h.until)}"
        asked = h.kind in {"forgotten", "expiry"}
        why = h.reason if asked else (h.evidence.quote if h.evidence else "")
        value = f"valid until {_when(h.valid_until)}" if h.kind == "expiry" else h.display
        _row(
            table,
            h.field,
            h.kind,
            value or "",
            f"v{h.version} {_when(h.at)}",
            until,
            "" if h.origin is None else h.origin.value,
            _who(h.confirmed_by),
            why or "",
        )
    return table


def diff_table(diffs: Sequence[FieldDiff], older: int, newer: int) -> Table:
    table = Table(title=f"Diff v{older} -> v{newer}")
    for column in ("field", f"v{older}", f"v{newer}"):
        table.add_column(column)
    for d in diffs:
        before = "" if d.before is None else d.before.display
        after = "(removed)" if d.after is None else d.after.display
        _row(table, d.field, before, after)
    return table


def queue_table(pending: Sequence[PendingChange]) -> Table:
    table = Table(title="Review queue (oldest first)")
    for column in ("proposed", "subject", "field", "value", "origin", "by"):
        table.add_column(column)
    for p in pending:
        _row(
            table,
            _when(p.proposed_at),
            str(p.subject_id)[:8],
            p.field,
            p.display or "",
            p.origin.value,
            _who(p.proposed_by),
        )
    return table


def sessions_table(sessions: Sequence[SessionEntry]) -> Table:
    table = Table(title="Sessions")
    for column in ("#", "session", "channel", "type", "started", "messages", "withheld"):
        table.add_column(column)
    for s in sessions:
        _row(
            table,
            str(s.interaction_number),
            s.session_id,
            s.channel,
            s.conversation_type or "-",
            _when(s.started_at),
            str(s.message_count),
            str(s.withheld_count),
        )
    return table
