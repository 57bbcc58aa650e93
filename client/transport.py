"""What both clients share: request building, retry decisions and answer decoding."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import httpx

from factledger.client.calls import AnswerT, Call
from factledger.client.errors import FactledgerError, error_for

RETRY_STATUSES = frozenset({502, 503, 504})
IDEMPOTENCY_HEADER = "Idempotency-Key"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries on transport errors, 502/503/504 and a 409 `RequestInProgressError` (the first
    try with the same key is still running). Commands keep their idempotency key throughout,
    so a retry of a command that did land returns the first result instead of acting twice."""

    attempts: int = 3
    backoff_s: float = 0.2
    max_backoff_s: float = 2.0

    def delay(self, attempt: int) -> float:
        base: float = min(self.max_backoff_s, self.backoff_s * 2.0**attempt)
        return base * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not cryptography


def request_args(call: Call[Any]) -> dict[str, Any]:
    headers = {} if call.idempotency_key is None else {IDEMPOTENCY_HEADER: call.idempotency_key}
    args: dict[str, Any] = {"params": dict(call.params), "headers": headers}
    if call.body is not None:
        args["json"] = dict(call.body)
    return args


def should_retry(response: httpx.Response) -> bool:
    if response.status_code in RETRY_STATUSES:
        return True
    if response.status_code == 409:
        try:
            return bool(response.json().get("error") == "RequestInProgressError")
        except ValueError:
            return False
    return False


def decode(call: Call[AnswerT], response: httpx.Response) -> AnswerT:
    if response.is_success:
        return call.answer.model_validate(response.json())
    raise _error(response)


def _error(response: httpx.Response) -> FactledgerError:
    try:
        body: object = response.json()
    except ValueError:
        body = None
    return error_for(response.status_code, body)


def auth_headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "User-Agent": "factledger-client/1"}
