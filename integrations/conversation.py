"""One factledger session as a framework's chat memory sees it: started on the first turn,
appended to turn by turn, read back while active, and ended (recorded) once.

A ledger forgets nothing and rewrites nothing, so a memory's "clear" ends the session: the
conversation is recorded, the sync makes it searchable, and the session id is spent (a later
turn under it is refused; a new conversation takes a new id).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from factledger.client import FactledgerClient, NotFoundError
from factledger.client.calls import ME
from factledger.client.models import Channel, EndedSession, Role, TranscriptMessage


class SessionEndedError(RuntimeError):
    """A turn was added to a session this memory already ended."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"session {session_id} has ended (it is recorded); "
            "a new conversation needs a new session id"
        )


@dataclass(slots=True)
class Conversation:
    client: FactledgerClient
    session_id: str
    subject: str = ME
    channel: Channel = "chat"
    _started: bool = field(default=False, init=False)
    _ended: bool = field(default=False, init=False)

    def add(self, role: Role, text: str) -> None:
        if self._ended:
            raise SessionEndedError(self.session_id)
        if not self._started:
            # Starting is idempotent by session id: a memory rebuilt for a live session
            # (another process, a restart) continues it.
            self.client.start_session(self.session_id, self.channel, subject=self.subject)
            self._started = True
        self.client.append_message(self.session_id, role, text, subject=self.subject)

    def transcript(self) -> list[TranscriptMessage]:
        """The active session's kept messages; none before the first turn or once ended."""
        if self._ended:
            return []
        try:
            return self.client.session_messages(self.session_id, subject=self.subject).messages
        except NotFoundError:
            return []  # not started yet (or ended elsewhere): nothing to show

    def end(self) -> EndedSession | None:
        """Ends the session (None when it never started); later turns are refused."""
        if self._ended:
            return None
        self._ended = True
        if not self._started and not self._active():
            return None
        return self.client.end_session(self.session_id, subject=self.subject)

    def _active(self) -> bool:
        """Whether the session is active on the server (started by an earlier memory)."""
        try:
            self.client.session_messages(self.session_id, subject=self.subject, last=1)
        except NotFoundError:
            return False
        return True
