"""`SecretScreen` over a stand-in detector: the inner filter's refusal stands as it is; a
message the detector reads at the bar or above is refused as `credential`, one below it keeps
the inner verdict; the detector reads the message's text as sent."""

from __future__ import annotations

from collections.abc import Sequence

from factledger.application.sessions.secret_screen import SECRET_MIN, SecretScreen
from factledger.application.sessions.types import ALLOWED, SafetyVerdict
from factledger.domain.transcript import Message, Role


class Reads:
    def __init__(self, p: float) -> None:
        self.p = p
        self.read: list[str] = []

    async def secret_p(self, texts: Sequence[str]) -> list[float]:
        self.read += texts
        return [self.p] * len(texts)


class Refuses:
    async def screen(self, message: Message) -> SafetyVerdict:
        return SafetyVerdict(allowed=False, category="payment_card")


class Allows:
    async def screen(self, message: Message) -> SafetyVerdict:
        return ALLOWED


async def test_at_the_bar_a_message_is_refused_as_a_credential() -> None:
    detector = Reads(SECRET_MIN)
    verdict = await SecretScreen(Allows(), detector).screen(Message(Role.SUBJECT, "code 7731"))
    assert (verdict.allowed, verdict.category) == (False, "credential")
    assert detector.read == ["code 7731"]


async def test_below_the_bar_the_inner_verdict_stands() -> None:
    verdict = await SecretScreen(Allows(), Reads(SECRET_MIN - 0.01)).screen(
        Message(Role.SUBJECT, "we moved in March")
    )
    assert verdict == ALLOWED


async def test_what_the_inner_filter_refuses_is_not_read_again() -> None:
    detector = Reads(0.0)
    verdict = await SecretScreen(Refuses(), detector).screen(Message(Role.SUBJECT, "4111..."))
    assert verdict.category == "payment_card"
    assert detector.read == []
