"""Conversation times: a session and its messages are dated by when they happened.

A caller importing or relaying a conversation passes its times (the session's `started_at`,
each message's `at`); without them, the clock's now is used. Times a caller passes must be:

- timezone-aware (a naive time means a different instant in every deployment);
- not in the future beyond `MAX_CLOCK_SKEW` (callers' clocks drift a little, no more);
- in order: a message no earlier than its session's start or the message before it.

What the ledger then dates by them: session notes, the sessions' index, and the profile
versions a subject's confirmation creates .
"""

from __future__ import annotations

from datetime import datetime, timedelta

from factledger.application.errors import ApplicationError

MAX_CLOCK_SKEW = timedelta(minutes=2)


class ConversationTimeError(ApplicationError):
    """A session or message time is naive, in the future or out of order (HTTP 422)."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field, self.rule = field, rule


def check_time(
    field: str, at: datetime, *, now: datetime, not_before: datetime | None = None
) -> datetime:
    """`at`, checked against the rules above; `not_before` is what it must not precede."""
    if at.tzinfo is None or at.utcoffset() is None:
        raise ConversationTimeError(field, "must carry a timezone")
    if at > now + MAX_CLOCK_SKEW:
        raise ConversationTimeError(
            field, f"is in the future (more than {int(MAX_CLOCK_SKEW.total_seconds())} s ahead)"
        )
    if not_before is not None and at < not_before:
        raise ConversationTimeError(
            field, "is earlier than the session's start or the message before it"
        )
    return at
