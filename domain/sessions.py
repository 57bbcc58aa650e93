"""Sessions: the episodic record of one interaction, kept verbatim on the subject's stream."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from factledger.domain.errors import InvalidSessionError, SessionConflictError, SessionFullError
from factledger.domain.provenance import Actor
from factledger.domain.text import UNSAFE_TEXT_RULE, check_json_text, check_text, is_safe_text
from factledger.domain.transcript import (
    MAX_MESSAGE_CHARS,
    Channel,
    Message,
    MessageDecision,
    Role,
)
from factledger.domain.values import Immutable, JsonObject, JsonValue

MAX_MESSAGES = 2000
MAX_SESSION_ID = 200
# Marks a fingerprint that is an HMAC under the subject's fingerprint key. One without it is
# the unkeyed SHA-256 sessions were recorded with before: whoever guessed a session's words
# could confirm the guess by hashing them, so new sessions are never fingerprinted that way.
KEYED_FINGERPRINT = "hmac-sha256:"


class UnkeyedFingerprint(Enum):
    """Asks, by name, for the unkeyed digest sessions were fingerprinted with before keyed
    fingerprints. Only to stand for those sessions (tests and lab fixtures of ledgers from
    before keys, a domain test that has no key store): every caller names a key or this,
    so no new session is recorded with a guessable fingerprint by leaving the key out."""

    BEFORE_KEYS = "before-keys"


BEFORE_KEYS = UnkeyedFingerprint.BEFORE_KEYS
# What a session's fingerprint is made under: the subject's fingerprint key, or `BEFORE_KEYS`.
FingerprintKey = bytes | UnkeyedFingerprint


def _message_payload(m: Message) -> JsonValue:
    payload: JsonObject = {
        "role": m.role.value,
        "text": m.text,
        "at": None if m.at is None else m.at.isoformat(),
    }
    if m.decides is not None:  # only then, so older sessions keep their fingerprints
        payload["decides"] = m.decides.encode()
    if m.relayed_by is not None:  # likewise
        payload["relayed_by"] = m.relayed_by.to_payload()
    return payload


def session_full(session_id: str, cap: int = MAX_MESSAGES) -> SessionFullError:
    """The error for a message past the cap: a longer session could never be recorded."""
    return SessionFullError(f"session {session_id}: at most {cap} messages")


def transcript_payload(transcript: tuple[Message, ...]) -> list[JsonValue]:
    return [_message_payload(m) for m in transcript]


def transcript_from_payload(payload: list[JsonValue]) -> tuple[Message, ...]:
    messages = []
    for item in payload:
        if not isinstance(item, dict):
            raise InvalidSessionError("transcript: every message must be an object")
        at, decides, text = item.get("at"), item.get("decides"), item.get("text")
        relayed_by = item.get("relayed_by")
        messages.append(
            Message(
                role=Role(str(item["role"])),
                text="" if text is None else str(text),
                at=datetime.fromisoformat(at) if isinstance(at, str) else None,
                decides=MessageDecision.decode(decides) if isinstance(decides, str) else None,
                relayed_by=Actor.from_payload(relayed_by) if isinstance(relayed_by, dict) else None,
                forgotten=text is None,
            )
        )
    return tuple(messages)


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One interaction as the caller reports it; `session_id` is theirs, so retries are no-ops."""

    session_id: str
    channel: Channel
    started_at: datetime
    ended_at: datetime | None
    transcript: tuple[Message, ...]
    summary: JsonObject | None = None
    withheld_count: int = 0  # messages dropped by safety checks; their content is never stored
    conversation_type: str | None = None  # picks the extraction guidance

    def _canonical(self) -> bytes:
        body: JsonObject = {
            "channel": self.channel.value,
            "started_at": self.started_at.isoformat(),
            "ended_at": None if self.ended_at is None else self.ended_at.isoformat(),
            "transcript": transcript_payload(self.transcript),
            "summary": self.summary,
            "withheld_count": self.withheld_count,
        }
        if self.conversation_type is not None:  # only then, so older sessions keep theirs
            body["conversation_type"] = self.conversation_type
        return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()

    def fingerprint(self, key: FingerprintKey) -> str:
        """What tells a retry of this session from another session under the same id: an
        HMAC under `key` (the subject's fingerprint key, shredded with the subject), so
        nobody without the key can test a guessed transcript against it. With
        `BEFORE_KEYS`, the unkeyed digest sessions were recorded with before keyed
        fingerprints (to compare with one of those)."""
        canonical = self._canonical()
        if isinstance(key, UnkeyedFingerprint):
            return hashlib.sha256(canonical).hexdigest()
        return KEYED_FINGERPRINT + hmac.new(key, canonical, hashlib.sha256).hexdigest()

    def matches(self, stored: str | None, key: FingerprintKey) -> bool:
        """Whether `stored` (a recorded session's fingerprint) is this session's, in the form
        it was stored in: keyed under `key`, or the unkeyed digest of a session recorded
        before keyed fingerprints (whatever `key` is: the stored form decides)."""
        if stored is None:
            return False  # its key is gone: nothing to compare with
        if stored.startswith(KEYED_FINGERPRINT):
            return isinstance(key, bytes) and hmac.compare_digest(stored, self.fingerprint(key))
        return hmac.compare_digest(stored, self.fingerprint(BEFORE_KEYS))

    def to_event_fields(self, fingerprint_key: FingerprintKey) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "channel": self.channel.value,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "transcript": transcript_payload(self.transcript),
            "summary": self.summary,
            "withheld_count": self.withheld_count,
            "conversation_type": self.conversation_type,
            "fingerprint": self.fingerprint(fingerprint_key),
        }


@dataclass(frozen=True, slots=True)
class SessionInfo(Immutable):
    """What the subject keeps of a recorded session to check evidence against it."""

    session_id: str
    channel: Channel
    started_at: datetime
    interaction_number: int
    fingerprint: str
    messages: tuple[tuple[Role, str], ...]
    # The subject's version once the session was recorded: confirmations compare it with
    # the version a change was proposed at ("recorded after the proposal").
    recorded_version: int = 0
    message_times: tuple[datetime | None, ...] = ()  # when each message was said, if known
    conversation_type: str | None = None
    # The change each message asks about or decides (`MessageDecision`), if any: forgetting
    # that change's field forgets those lines too.
    message_changes: tuple[str | None, ...] = ()

    def said_at(self, message_index: int) -> datetime:
        """When a message was said: its own time, else the session's start."""
        if message_index < len(self.message_times):
            at = self.message_times[message_index]
            if at is not None:
                return at
        return self.started_at


def check_session_text(session: SessionRecord) -> None:
    """Every message and the summary must be text any store can hold (`domain.text`)."""
    for index, message in enumerate(session.transcript):
        check_text(message.text, f"transcript[{index}].text")
    check_json_text(session.summary, "summary")


def check_session(
    session: SessionRecord, existing: SessionInfo | None, fingerprint_key: FingerprintKey
) -> bool:
    """True when the session is new and valid; False when it is an identical retry (compared
    under the subject's `fingerprint_key`, or unkeyed for a session recorded before keys)."""
    if not session.session_id.strip() or len(session.session_id) > MAX_SESSION_ID:
        raise InvalidSessionError(f"session_id: must be 1..{MAX_SESSION_ID} characters")
    if not is_safe_text(session.session_id):
        raise InvalidSessionError(f"session_id: {UNSAFE_TEXT_RULE}")
    if session.ended_at is not None and session.ended_at < session.started_at:
        raise InvalidSessionError(f"session {session.session_id}: ends before it starts")
    if session.withheld_count < 0:
        raise InvalidSessionError(f"session {session.session_id}: negative withheld count")
    if len(session.transcript) > MAX_MESSAGES:
        raise InvalidSessionError(f"session {session.session_id}: over {MAX_MESSAGES} messages")
    if any(len(message.text) > MAX_MESSAGE_CHARS for message in session.transcript):
        raise InvalidSessionError(
            f"session {session.session_id}: a message over {MAX_MESSAGE_CHARS} characters"
        )
    check_session_text(session)
    if existing is None:
        return True
    if not session.matches(existing.fingerprint, fingerprint_key):
        raise SessionConflictError(f"session {session.session_id}: recorded with other content")
    return False
