"""Rich renderings of ledger read models for the CLI (profile, versions, history, queue).

Each is a `Records`: a table where its columns fit the terminal with no word cut, else one
block per row, each cell on a line of its own beside its column's name. Values are wrapped,
never truncated: a reviewer reads a supplier's name or a quote whole at any width.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from rich.console import Console, ConsoleOptions, Group, OverflowMethod, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from factledger.application.ledger.queries import (
    FieldDiff,
    FieldHistoryEntry,
    PendingChange,
    ProfileVersion,
    SessionEntry,
)
from factledger.domain.provenance import Actor

UNLIMITED = 10_000  # columns: wider than any terminal


@dataclass
class Records:
    """Rows under named columns, drawn to fit the width they are printed at."""

    title: str
    columns: Sequence[str]
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def table(self, *, overflow: OverflowMethod = "fold") -> Table:
        table = Table(title=self.title)
        for column in self.columns:
            table.add_column(column, overflow=overflow)
        for cells in self.rows:
            # Cells hold user content: escaped, or rich reads "[forgotten]" as markup.
            table.add_row(*(escape(cell) for cell in cells))
        return table

    def blocks(self) -> Group:
        parts: list[Table | Text | Rule] = [Text(self.title, style="bold")]
        for number, cells in enumerate(self.rows, start=1):
            block = Table.grid(padding=(0, 2))
            block.add_column(style="bold", no_wrap=True)
            block.add_column(overflow="fold")
            for column, cell in zip(self.columns, cells, strict=True):
                if cell:
                    block.add_row(escape(column), escape(cell))
            parts.extend([Rule(f"#{number}", align="left", style="dim"), block])
        return Group(*parts)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # The narrowest the table can be drawn without cutting a word, measured as if room
        # were unlimited (rich caps a measure at the width offered; folding splits words).
        unlimited = options.update_width(UNLIMITED)
        narrowest = Measurement.get(console, unlimited, self.table(overflow="ellipsis")).minimum
        yield self.table() if narrowest <= options.max_width else self.blocks()


def _row(table: Records, *cells: str) -> None:
    table.rows.append(cells)


def _when(at: datetime | None) -> str:
    return "" if at is None else at.strftime("%Y-%m-%d %H:%M")


def _who(actor: Actor | None) -> str:
    return "" if actor is None else f"{actor.kind.value}:{actor.id}"


def profile_table(profile: ProfileVersion, title: str) -> Records:
    table = Records(
        f"{title} (version {profile.version}, {_when(profile.at)})",
        (
            "field",
            "value",
            "condition",
            "origin",
            "proposed by",
            "confirmed by",
            "said",
            "known",
            "evidence",
            "since v",
            "valid until",
        ),
    )
    for name, f in profile.fields.items():
        _row(
            table,
            name,
            f.display,
            f.condition or "",
            f.origin.value,
            _who(f.proposed_by),
            _who(f.confirmed_by),
            _when(f.said_at or f.confirmed_at),
            _when(f.known_at or f.confirmed_at),
            "" if f.evidence is None else f'{f.evidence.session_id}: "{f.evidence.quote}"',
            str(f.version),
            _when(f.valid_until),
        )
    return table


def versions_table(versions: Sequence[ProfileVersion]) -> Records:
    table = Records(
        "Profile versions (each retrievable as of its date)",
        ("version", "as of", "cause", "fields"),
    )
    for v in versions:
        fields = ", ".join(f"{n}={f.display}" for n, f in v.fields.items()) or "(empty)"
        _row(table, str(v.version), _when(v.at), v.cause, fields)
    return table


def history_table(entries: Sequence[FieldHistoryEntry], title: str) -> Records:
    table = Records(
        title,
        (
            "field",
            "what",
            "value",
            "from",
            "until",
            "origin",
            "confirmed/asked by",
            "why",
        ),
    )
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


def diff_table(diffs: Sequence[FieldDiff], older: int, newer: int) -> Records:
    return dated_diff_table(diffs, f"Diff v{older} -> v{newer}", f"v{older}", f"v{newer}")


def dated_diff_table(diffs: Sequence[FieldDiff], title: str, older: str, newer: str) -> Records:
    """What changed between two profiles, headed `older` and `newer` (versions or dates)."""
    table = Records(title, ("field", older, newer))
    for d in diffs:
        before = "" if d.before is None else d.before.display
        after = "(removed)" if d.after is None else d.after.display
        _row(table, d.field, before, after)
    return table


def queue_table(pending: Sequence[PendingChange]) -> Records:
    table = Records(
        "Review queue (oldest first)", ("proposed", "subject", "field", "value", "origin", "by")
    )
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


def sessions_table(sessions: Sequence[SessionEntry]) -> Records:
    table = Records(
        "Sessions", ("#", "session", "channel", "type", "started", "messages", "withheld")
    )
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
