"""The default `SafetyFilter`: maintained detectors find what a memory must never keep.

- `credential`: a token in a known format (cloud, code-host, payment-processor and chat keys,
  JSON web tokens, private key blocks, passwords in URLs: every format detector of Yelp's
  `detect-secrets`); a long random-looking token pasted alone or in a sentence (its Shannon
  entropy, as `detect-secrets` computes it); or a credential word (the keyword detector's
  list, plus the spoken short forms it lacks, such as "pw" and "PIN") that gives a value:
  "the admin pw is hunter2", "password for the portal is ...", "passcode 4411". With words
  between the credential word and its value, the value must look like a secret (digits,
  symbols or mixed case), so "the pin on the map is wrong" stays allowed;
- `bank_account`: an IBAN, with or without spaces, that passes its checksum;
- `payment_card`: a 13-19 digit number that passes the Luhn check;
- `national_id`: a valid US social security number.

Instructions to the agent (`prompt_injection`) are not found by phrases here: a learned
classifier judges them (`application/sessions/instruction_screen.py` over
`adapters/judgement/instructions.py`), composed around this filter at start-up. Nor are
secrets in other languages or wordings (a gate code, a PIN said in Italian): the credential
words here are a detector's for source code, and a learned classifier reads the rest
(`application/sessions/secret_screen.py` over `adapters/judgement/secrets.py`, ADR 0185).

Checksums come from `python-stdnum`. A verdict names its category only, never a fragment of
the message, and nothing here logs. Deployments with a classifier plug in their own adapter
behind the same port.

`detect-secrets` is imported, and the patterns built from its word list compiled, at the
first message screened rather than with this module: the library's import (with `requests`,
which it imports) was some 5% of the imports of a start to ready. A served process imports
it on a thread once it is ready (`api/bootstrap/deferred_imports.py`).
"""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from stdnum import iban, luhn
from stdnum.us import ssn

from factledger.application.sessions.types import ALLOWED, SafetyVerdict
from factledger.domain.transcript import Message

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

# Spoken forms of credential words that the keyword detector, written for source code, lacks.
SPOKEN_CREDENTIAL_WORDS = ("pw", "passcode", "pin", "one[- ]time code", "otp", "token")
_CARD_CANDIDATE = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_IBAN_CANDIDATE = re.compile(r"\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,32}", re.IGNORECASE)
_SSN_CANDIDATE = re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)")
_EDGE_PUNCTUATION = "\"'`.,;:!?()[]{}<>"
_HEX = frozenset("0123456789abcdefABCDEF")
# Entropy bounds per character set: random hex carries up to 4 bits a character, random
# base64 up to 6; ordinary words and ids stay well below these at this length.
LONG_TOKEN = 20
HEX_ENTROPY = 3.0
BASE64_ENTROPY = 4.0


@cache
def _credential_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A credential word stated with its value, and one directly followed by a value."""
    from detect_secrets.plugins.keyword import DENYLIST

    word = rf"(?:{'|'.join((*DENYLIST, *SPOKEN_CREDENTIAL_WORDS))})"
    # The word, up to four words about what it opens, then "is", ":" or "=" and the value.
    stated = re.compile(
        rf"\b{word}\b(?P<between>(?:\s+[^\s:=]+){{0,4}}?)\s*(?:\bis\b|:|=)\s*"
        r"(?P<value>\S+?)(?P<end>[.,;!?]*(?:\s|$))",
        re.IGNORECASE,
    )
    # The word directly followed by a value that looks like one: "passcode 4411".
    given = re.compile(rf"\b{word}\s+(?P<value>\S+)", re.IGNORECASE)
    return stated, given


@cache
def _format_detectors() -> tuple[RegexBasedDetector, ...]:
    """Every format detector `detect-secrets` ships (a public IP address is no secret)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.ip_public import IPPublicDetector

    classes: Iterable[type[BasePlugin]] = get_mapping_from_secret_type_to_class().values()
    return tuple(
        cls()
        for cls in sorted(classes, key=lambda c: c.__name__)
        if issubclass(cls, RegexBasedDetector) and cls is not IPPublicDetector
    )


def shannon_entropy(token: str) -> float:
    """Bits per character (what `detect-secrets`' high-entropy plugins measure)."""
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _looks_secret(value: str) -> bool:
    """A value with digits, symbols or inner capitals: not an ordinary word."""
    value = value.strip(_EDGE_PUNCTUATION)
    if len(value) < 4:
        return False
    return (
        any(c.isdigit() for c in value)
        or any(not c.isalnum() for c in value)
        or any(c.isupper() for c in value[1:])
    )


def _is_uuid(token: str) -> bool:
    try:
        uuid.UUID(token)
    except ValueError:
        return False
    return True


def _random_token(token: str) -> bool:
    token = token.strip(_EDGE_PUNCTUATION)
    if len(token) < LONG_TOKEN or "://" in token or _is_uuid(token):
        return False
    if not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)):
        return False
    bound = HEX_ENTROPY if set(token) <= _HEX else BASE64_ENTROPY
    return shannon_entropy(token) >= bound


def has_credential(text: str) -> bool:
    if any(True for d in _format_detectors() for _ in d.analyze_string(text)):
        return True
    if any(_random_token(token) for token in text.split()):
        return True
    stated, given = _credential_patterns()
    for match in stated.finditer(text):
        value = match.group("value").strip(_EDGE_PUNCTUATION)
        # Right after the word, a value that ends its clause is taken at its word ("my
        # password is swordfish."); one that runs on is a sentence ("the secret is that").
        said_last = match.group("end").strip() != "" or match.end() == len(text)
        direct = not match.group("between").strip() and said_last
        if value and (direct or _looks_secret(value)):
            return True
    return any(_looks_secret(m.group("value")) for m in given.finditer(text))


def has_iban(text: str) -> bool:
    for match in _IBAN_CANDIDATE.finditer(text):
        compact = iban.compact(match.group())
        # The pattern may run into the next word: try the longest valid prefix.
        if any(iban.is_valid(compact[:end]) for end in range(len(compact), 14, -1)):
            return True
    return False


def has_card_number(text: str) -> bool:
    for match in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn.is_valid(digits):
            return True
    return False


def has_national_id(text: str) -> bool:
    return any(ssn.is_valid(m.group()) for m in _SSN_CANDIDATE.finditer(text))


class DetectorSafetyFilter:
    """The default `SafetyFilter`: library detectors and checksums, no model, no network."""

    async def screen(self, message: Message) -> SafetyVerdict:
        """Refuses the message when a detector fires; the verdict names its category only."""
        text = message.text
        if has_card_number(text):
            return SafetyVerdict(allowed=False, category="payment_card")
        if has_iban(text):
            return SafetyVerdict(allowed=False, category="bank_account")
        if has_national_id(text):
            return SafetyVerdict(allowed=False, category="national_id")
        if has_credential(text):
            return SafetyVerdict(allowed=False, category="credential")
        return ALLOWED
