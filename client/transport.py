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
    so a retry of a command that did land returns the first result instead of acting twice.

    - Waits `backoff_s * 2**attempt` (at most `max_backoff_s`, jittered), or the server's
      `Retry-After` when it sends one.
    - Gives up after `attempts` tries or once `total_s` has passed since the first try,
      whichever comes first; the last wait is cut short so that the last try starts at
      `total_s` at the latest. The default 12 s outlasts the server's idempotency lease (5 s by
      default), so a key left "in progress" by an API process that died is free again before
      the client gives up. The answer then is the last one received (or `TransportFailedError`).
    """

    attempts: int = 12
    backoff_s: float = 0.2
    max_backoff_s: float = 2.0
    total_s: float = 12.0

    def delay(self, attempt: int) -> float:
        base: float = min(self.max_backoff_s, self.backoff_s * 2.0**attempt)
        return base * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not cryptography

    def wait_before_retry(
        self, attempt: int, elapsed_s: float, retry_after_s: float | None = None
    ) -> float | None:
        """How long to wait before try `attempt + 2` (None: give up), `elapsed_s` after the
        first try started."""
        if attempt + 1 >= self.attempts:
            return None
        left = self.total_s - elapsed_s
        if left <= 0:
            return None
        wait = self.delay(attempt) if retry_after_s is None else retry_after_s
        return min(wait, left)


def retry_after_of(response: httpx.Response) -> float | None:
    """The server's `Retry-After` in seconds (dates are not used by this API)."""
    raw = response.headers.get("Retry-After")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


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
