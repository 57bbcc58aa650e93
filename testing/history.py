"""Generated conversation histories in the import format, for tests and the import benchmark.

Seeded, so a size and a seed always give the same bytes (and so the same content hash). Each
subject gets its sessions in time order, a supplier that changes now and then (the rule
extractor proposes from it) and, every so often, a payment card the safety filter withholds.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

START = datetime(2024, 1, 8, 9, 0, tzinfo=UTC)
CHANNELS = ("chat", "whatsapp", "voice", "email")
SUPPLIERS = ("Supplier A", "Supplier B", "Northwind", "Contoso", "Globex")
FILLER = (
    "Thanks for getting back to me.",
    "Can you send the invoice again?",
    "The delivery arrived on Tuesday.",
    "Let me check with the team and come back to you.",
    "Our order volume is similar to last month.",
)
CARD = "4111 1111 1111 1111"


@dataclass(frozen=True, slots=True)
class HistoryShape:
    subjects: int
    sessions_per_subject: int
    messages_per_session: int
    seed: int = 7

    @property
    def messages(self) -> int:
        return self.subjects * self.sessions_per_subject * self.messages_per_session


def _message(rng: random.Random, n: int, supplier: str, at: datetime) -> dict[str, object]:
    if n % 2:
        return {"role": "agent", "text": rng.choice(FILLER), "at": at.isoformat()}
    if n == 0:
        text = f"We work with {supplier} at the moment."
    elif rng.random() < 0.02:
        text = f"My card is {CARD}, please charge it."
    else:
        text = rng.choice(FILLER)
    return {"role": "subject", "text": text, "at": at.isoformat()}


def history_lines(shape: HistoryShape) -> Iterator[str]:
    """The lines of the history (no newlines), subject by subject, sessions oldest first."""
    rng = random.Random(shape.seed)
    for s in range(shape.subjects):
        ref = f"crm-{s:05d}"
        yield json.dumps({"type": "subject", "kind": "lead", "ref": ref})
        supplier = rng.choice(SUPPLIERS)
        started = START + timedelta(hours=s)
        for k in range(shape.sessions_per_subject):
            if rng.random() < 0.3:
                supplier = rng.choice(SUPPLIERS)
            started += timedelta(days=rng.randint(1, 20))
            times = (started + timedelta(seconds=30 * n) for n in range(10**9))
            messages = [
                _message(rng, n, supplier, at)
                for n, at in zip(range(shape.messages_per_session), times, strict=False)
            ]
            session = {
                "type": "session",
                "subject": {"kind": "lead", "ref": ref},
                "session_id": f"hist-{k:04d}",
                "channel": CHANNELS[k % len(CHANNELS)],
                "started_at": started.isoformat(),
                "messages": messages,
            }
            if k % 5 == 4:
                session["summary"] = {"topic": "suppliers", "next_step": "follow up"}
            yield json.dumps(session)


def history_bytes(shape: HistoryShape) -> bytes:
    return "".join(f"{line}\n" for line in history_lines(shape)).encode()
