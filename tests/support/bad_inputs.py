"""Hand-made bad and awkward inputs against one subject: broken encodings, NUL and unpaired
surrogates in every text field, oversized values, awkward summaries and forgets, mixed with
the good requests they ride on. Every answer must be below 500; what is accepted becomes the
subject's history, which the analyst then reads back (tests/e2e/test_api_bad_inputs_stores.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from support.api_harness import CHANNEL_ID, bearer, token

from factledger.api.http.auth import Role

# Text that breaks a rule (refused with 422) and text that is awkward but allowed.
BAD_TEXTS = ("nul \x00 inside", "lone \ud800 surrogate", "x" * 70_000)
ODD_TEXTS = (
    "emoji 😀 and RTL \u202e text",
    "combining e\u0301\u0301\u0301",
    "zero\u200bwidth",
    "tab\tand\nnewlines\r\n",
    'quote " backslash \\ brace {',
    "a" * 3_000,
    "\ufeffbom first",
)
ODD_SUMMARIES: tuple[dict[str, Any], ...] = (
    {"topic": "plain"},
    {"nested": {"deeper": {"deepest": [1, 2.5, None, True, "x"]}}},
    {"numbers": [0, -0.0, 1e308, -1e308, 2**53, -(2**53), 123456789012345678]},
    {"empty": "", "list": [], "map": {}},
    {"unicode key é😀": "value", "k": "v" * 2_000},
    {"many": [str(n) for n in range(300)]},
)
BAD_SUMMARIES: tuple[Any, ...] = (
    {"k": "nul \x00"},
    {"nul \x00 key": "v"},
    {"deep": json.loads("[" * 40 + "1" + "]" * 40)},
    ["not", "a", "map"],
    "a string",
    {"big": 2**80},
)
RAW_BODIES = (
    b"\xff\xfe not utf-8",
    b'{"role": "subject", "text": "\\ud800"}',
    b'{"role": "subject", "text": "\\u0000"}',
    b'{"role": "subject", "text": "ok"',  # cut short
    b"\xef\xbb\xbf" + b'{"role": "subject", "text": "bom"}',
    b'{"role": "subject", "text": "\xed\xa0\x80"}',  # a surrogate as UTF-8 bytes
)
FORGETS: tuple[Any, ...] = (
    {"field": "supplier"},
    {"field": "never_held"},
    {"field": "x" * 200},
    {"field": "nul\x00"},
    {"memory_id": "no-such-memory"},
    {"field": "supplier", "memory_id": "m"},
    {},
    {"field": None},
)


@dataclass
class Tally:
    """Answers by status; any 5xx is kept with what caused it."""

    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def note(self, what: str, response: httpx.Response) -> None:
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        if response.status_code >= 500:
            self.failures.append(f"{what}: {response.status_code} {response.text[:200]}")


def _requests(subject_id: str, round_: int) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(what, method, request arguments) for one round; paths are relative to the subject."""
    session = f"bad-{round_}"
    yield "start", "POST", {"url": "/sessions", "json": {"session_id": session, "channel": "chat"}}
    messages = f"/sessions/{session}/messages"
    for n, text in enumerate((*BAD_TEXTS, *ODD_TEXTS)):
        role = "subject" if n % 2 else "agent"
        yield f"message {n}", "POST", {"url": messages, "json": {"role": role, "text": text}}
    for n, raw in enumerate(RAW_BODIES):
        headers = {"Content-Type": "application/json"}
        yield f"raw {n}", "POST", {"url": messages, "content": raw, "headers": headers}
    summaries = (*BAD_SUMMARIES, ODD_SUMMARIES[round_ % len(ODD_SUMMARIES)])
    for n, summary in enumerate(summaries):
        body = json.dumps({"summary": summary}, ensure_ascii=False).encode("utf-8", "surrogatepass")
        headers = {"Content-Type": "application/json"}
        yield (
            f"end {n}",
            "POST",
            {"url": f"/sessions/{session}/end", "content": body, "headers": headers},
        )
    proposal = {
        "field": "supplier",
        "value": {"type": "text", "value": ODD_TEXTS[round_ % len(ODD_TEXTS)][:200]},
        "origin": "inferred",
        "rationale": "said so",
    }
    yield "proposal", "POST", {"url": "/proposals", "json": proposal}
    for n, forget in enumerate(FORGETS):
        yield f"forget {n}", "POST", {"url": "/forget", "json": forget}


def _encoded(body: Any) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass")


def pound(
    url: str, *, rounds: int, tenant: str = "t1", ref: str = "bad-inputs-1"
) -> tuple[str, Tally]:
    """Registers a subject and sends `rounds` rounds of inputs at it as the platform's service
    (the channel that relays the subject's lines); returns the subject id and the tally."""
    service = bearer(token(Role.SERVICE, tenant=tenant, principal_id=CHANNEL_ID))
    tally = Tally()
    with httpx.Client(base_url=url, headers=service, timeout=60) as http:
        created = http.post("/v1/subjects", json={"kind": "lead", "external_ref": ref})
        created.raise_for_status()
        subject_id = str(created.json()["subject_id"])
        for round_ in range(rounds):
            for what, method, arguments in _requests(subject_id, round_):
                arguments = {**arguments, "url": f"/v1/subjects/{subject_id}{arguments['url']}"}
                if "json" in arguments:  # sent as written, surrogates and all
                    arguments["content"] = _encoded(arguments.pop("json"))
                    arguments["headers"] = {"Content-Type": "application/json"}
                tally.note(what, http.request(method, **arguments))
    return subject_id, tally
