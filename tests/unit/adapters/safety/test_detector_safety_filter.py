"""The default safety filter withholds credentials in any wording, bank accounts, cards and
national ids, and lets ordinary talk through; its verdicts and logs never carry the secret."""

from __future__ import annotations

from uuid import UUID

import pytest
import structlog

from factledger.adapters.in_memory.session_buffer import InMemorySessionBuffer
from factledger.adapters.safety.detectors import DetectorSafetyFilter, shannon_entropy
from factledger.application.sessions.short_term import SessionPorts, ShortTermMemory
from factledger.application.sessions.types import SessionKey, SessionRecording
from factledger.domain.transcript import Channel, Message, Role
from factledger.testing.manual_clock import ManualClock

FILTER = DetectorSafetyFilter()


async def category(text: str) -> str | None:
    verdict = await FILTER.screen(Message(Role.SUBJECT, text))
    assert verdict.allowed is (verdict.category is None)
    return verdict.category


@pytest.mark.parametrize(
    "text",
    [
        "the admin pw is hunter2",
        "my password is hunter2",
        "my password is swordfish.",
        "password: swordfish",
        "My password for the portal is Tr0ub4dor&3 if you need it",
        "the passcode for the door is 4411",
        "passcode 4411",
        "PIN: 4321",
        "my api key is 3kJ9x2LmQp7RtY8vWz4aB6cD",
        "3kJ9x2LmQp7RtY8vWz4aB6cD",  # a token pasted alone
        "here you go: ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "AKIAIOSFODNN7EXAMPLE",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "xoxb-123456789012-123456789012-abcdefghijABCDEFGHIJklmn",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "log in at https://admin:Sup3rSecret@portal.example.com",
        "token 9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6",
    ],
)
async def test_credentials_in_any_wording_are_withheld(text: str) -> None:
    assert await category(text) == "credential"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my IBAN is DE89 3704 0044 0532 0130 00", "bank_account"),
        ("iban gb82west12345698765432 please", "bank_account"),
        ("pay to GB82-WEST-1234-5698-7654-32 by Friday", "bank_account"),
        ("card 4111-1111-1111-1111 please", "payment_card"),
        ("my card number is 5500 0000 0000 0004", "payment_card"),
        ("SSN 123-45-6789", "national_id"),
    ],
)
async def test_accounts_cards_and_ids_are_withheld_with_their_category(
    text: str, expected: str
) -> None:
    assert await category(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "We moved to Supplier B in March",
        "order 1234567890123 arrived late",  # 13 digits failing the Luhn check
        "the pin on the map is wrong",
        "the password policy is strict",
        "the password is expired and I need a reset",
        "the secret is that we are moving offices",
        "DE89 3704 0044 0532 0130 01 is not a real account",  # a failing IBAN checksum
        "SSN 000-12-3456",  # never issued
        "our order id is 3f2504e0-4f89-11d3-9a0c-0305e82c3301",
        "see https://example.com/docs/getting-started-with-the-api-v2",
        "Budget is 12000 USD for 40 seats",
        "call me at +44 20 7946 0958",
    ],
)
async def test_ordinary_messages_are_allowed(text: str) -> None:
    assert await category(text) is None


def test_a_random_token_carries_more_entropy_than_a_word() -> None:
    assert shannon_entropy("3kJ9x2LmQp7RtY8vWz4aB6cD") > shannon_entropy("internationalisation")


async def test_a_withheld_secret_reaches_neither_the_buffer_nor_the_logs() -> None:
    buffer = InMemorySessionBuffer()
    memory = ShortTermMemory(SessionPorts(buffer, FILTER, NoRecorder(), ManualClock()))
    subject = UUID(int=1)
    key = SessionKey(subject, "wa-1")
    with structlog.testing.capture_logs() as logs:
        await memory.start(subject, "wa-1", Channel.WHATSAPP)
        outcome = await memory.add_message(key, Message(Role.SUBJECT, "the admin pw is hunter2"))
    assert (outcome.kept, outcome.withheld_total) == (False, 1)
    assert "hunter2" not in repr(await buffer.messages(key))
    assert "hunter2" not in repr(logs)
    assert any(entry.get("category") == "credential" for entry in logs)


class NoRecorder:
    async def record_session(self, recording: SessionRecording) -> None:
        raise AssertionError("no session ends here")
