"""The product side of `factledger demo`: what an agent gets from memory as the story unfolds.

The story (`testing.story.steps.play_story`) hands each session to `AgentDemo.record`, which
sends it through short-term memory the way a live agent would (one message a turn; the lead
also shares a card number, which the safety filter withholds). At the end of each month
`AgentDemo.checkpoint` runs the sync worker once (ledger -> memory backend) and prints what an
agent would put in its prompt: `session_context` at the start of a call and `recall` for a turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.panel import Panel
from rich.text import Text

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.ledger.commands import RecordSession
from factledger.application.memory.record_ids import namespace_for
from factledger.application.recall.notes import render_context, render_recall
from factledger.application.recall.types import Note, NoteKind
from factledger.testing.story.drivers import tell_short_term_memory
from factledger.testing.story.script import KIND, REF, TENANT, Month


@dataclass(frozen=True, slots=True)
class AgentLook:
    """What the agent asks at one checkpoint: the session's opening topic and its turns."""

    topic: str
    turns: tuple[str, ...]


SUPPLIER_TURN = "Which supplier do you work with?"
INTENT_TURN = "Will you switch to us next quarter if the pricing works?"
REASON_TURN = "What went wrong with Supplier A, the delivery delays?"
LOOKS: dict[Month, AgentLook] = {
    "January": AgentLook("packaging supplier", (SUPPLIER_TURN, INTENT_TURN)),
    "March": AgentLook("packaging supplier", (SUPPLIER_TURN, INTENT_TURN)),
    "June": AgentLook("packaging supplier", (SUPPLIER_TURN, REASON_TURN)),
    "July": AgentLook("packaging supplier", (REASON_TURN,)),
}


def _origin(note: Note) -> str:
    """Where a note comes from, for the reader of the demo (the agent gets the text only)."""
    said = "inferred by a model" if note.origin.inferred else "stated by the lead"
    match note.origin.kind:
        case NoteKind.PROFILE:
            return f"{note.origin.ref}: confirmed profile field, {said}"
        case NoteKind.PROPOSAL:
            return f"{note.origin.ref}: open proposal, {said}, not yet confirmed"
        case NoteKind.MEMORY:
            return f"memory {note.origin.ref[:8]}: from session {note.origin.session_id}, {said}"
        case NoteKind.SESSION:
            return f"session {note.origin.ref}: summary"


class AgentDemo:
    """Records the story's sessions through short-term memory and shows recall after each
    month; `show` receives rich renderables."""

    def __init__(self, runtime: Runtime, show: Callable[[object], None]) -> None:
        if runtime.sessions is None or runtime.recall is None:
            raise ValueError("the agent demo needs a runtime with short-term memory and recall")
        self._sessions, self._recall = runtime.sessions, runtime.recall
        self._worker, self._backend = runtime.sync_worker, runtime.backend
        self._show = show
        self.subject_id = runtime.ledger.subject_id_for(TENANT, KIND, REF)

    async def record(self, session: RecordSession) -> None:
        if await tell_short_term_memory(self._sessions, session):
            self._show("  [yellow]![/yellow] safety filter: one message withheld (a card number)")

    async def checkpoint(self, month: Month) -> None:
        worker, recall = self._worker, self._recall
        # Earlier months' syncs forget memories too (a rejection retires its value's memory):
        # July's count is of what this month's sync forgot, the field's memories alone.
        forgotten_before = await self._forgotten_ids()
        if worker is not None:
            report = await worker.run_once()
            self._show(
                f"  [cyan]sync[/cyan]: {report.done} items applied to the memory backend, "
                f"{report.skipped} skipped, {report.dead} failed"
            )
        if month == "July" and self._backend is not None:
            self._show_forgotten(len(await self._forgotten_ids() - forgotten_before))
        look = LOOKS[month]
        context = await recall.session_context(self.subject_id, topic=look.topic, tenant=TENANT)
        self._panel(f"{month}: session_context(topic={look.topic})", render_context(context))
        notes = [*context.profile, *context.to_confirm, *context.memories]
        for query in look.turns:
            turn = await recall.recall(self.subject_id, query, tenant=TENANT)
            self._panel(f"{month}: recall({query})", render_recall(turn))
            notes.extend(turn.notes)
        origins = "\n".join(f"- {_origin(n)}" for n in notes)
        self._show(Text(f"  where these notes come from:\n{origins}", style="dim"))

    async def _forgotten_ids(self) -> frozenset[str]:
        """Ids of the subject's backend memories forgotten so far (content never read)."""
        if self._backend is None:
            return frozenset()
        ns = namespace_for(self.subject_id)
        memories = await self._backend.list_memories(ns, include_forgotten=True)
        return frozenset(m.id for m in memories if m.is_forgotten)

    def _show_forgotten(self, forgotten: int) -> None:
        """The sync forgot, with the field, the memories drawn from the words that evidenced
        it: counted, content never shown."""
        noun = "memory" if forgotten == 1 else "memories"
        self._show(
            f"  [green]>[/green] July: the sync forgot {forgotten} backend {noun} with the "
            "field, found by its slot and by the words that evidenced it"
        )

    def _panel(self, title: str, body: str) -> None:
        self._show(Panel(Text(body), title=title, title_align="left", expand=False))
