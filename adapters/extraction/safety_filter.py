"""A rule-based `SafetyFilter`: refuses messages that carry secrets a memory must never keep.

Rules (each returns a fixed category code, never a fragment of the message):
- `payment_card`: a 13-19 digit number that passes the Luhn check;
- `credential`: "password", "passcode", "PIN" or "one-time code" followed by a value;
- `national_id`: a US social security number pattern (ddd-dd-dddd);
- `prompt_injection`: "ignore (all) previous/prior instructions" and close variants.
Deployments with a classifier plug in their own adapter behind the same port.
"""

from __future__ import annotations

import re

from factledger.application.sessions.types import ALLOWED, SafetyVerdict
from factledger.domain.transcript import Message

_CARD_CANDIDATE = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_CREDENTIAL = re.compile(
    r"\b(?:password|passcode|pin|one[- ]time code|otp)\b\s*(?:is|:|=)\s*\S+", re.IGNORECASE
)
_SSN = re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)")
_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above)\s+"
    r"(?:instructions|prompts|rules)\b",
    re.IGNORECASE,
)


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _has_card_number(text: str) -> bool:
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn_ok(digits):
            return True
    return False


class RuleBasedSafetyFilter:
    """The default `SafetyFilter`: a handful of regular expressions, no model, no network."""

    async def screen(self, message: Message) -> SafetyVerdict:
        """Refuses the message when any rule matches; the verdict names the rule only."""
        text = message.text
        if _has_card_number(text):
            return SafetyVerdict(allowed=False, category="payment_card")
        if _CREDENTIAL.search(text):
            return SafetyVerdict(allowed=False, category="credential")
        if _SSN.search(text):
            return SafetyVerdict(allowed=False, category="national_id")
        if _INJECTION.search(text):
            return SafetyVerdict(allowed=False, category="prompt_injection")
        return ALLOWED
