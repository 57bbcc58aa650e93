"""What both clients share: request building, retry decisions and answer decoding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import tenacity
from tenacity import RetryCallState

from factledger.client.calls import AnswerT, Call
from factledger.client.errors import FactledgerError, error_for

RETRY_STATUSES = frozenset({502, 503, 504})
IDEMPOTENCY_HEADER = "Idempotency-Key"
# The server's write position after a write; sent back on reads so that, with standbys, no
# read is older than this client's own writes.
POSITION_HEADER = "Factledger-Position"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries on transport errors, 502/503/504 and a 409 `RequestInProgressError` (the first
    try with the same key is still running). Commands keep their idempotency key throughout,
    so a retry of a command that did land returns the first result instead of acting twice.

    - Waits `backoff_s * 2**n` before retry `n + 1` (at most `max_backoff_s`, jittered
      between half and all of it), or the server's `Retry-After` when it sends one.
    - Gives up after `attempts` tries or once `total_s` has passed since the first try,
      whichever comes first; the last wait is cut short so that the last try starts at
      `total_s` at the latest. The default 12 s outlasts the server's idempotency lease (5 s by
      default), so a key left "in progress" by an API process that died is free again before
      the client gives up. The answer then is the last one received (or `TransportFailedError`).

    The loop itself is tenacity's (`retrying`, `async_retrying`); this class only sizes it.
    """

    attempts: int = 12
    backoff_s: float = 0.2
    max_backoff_s: float = 2.0
    total_s: float = 12.0

    def backoff(self) -> tenacity.wait.wait_base:
        """Exponential backoff with equal jitter: a fixed half and a random half, so that
        clients failed by one outage do not all come back at once."""
        half, most = self.backoff_s / 2, self.max_backoff_s / 2
        fixed = tenacity.wait_exponential(multiplier=half, max=most)
        return fixed + tenacity.wait_random_exponential(multiplier=half, max=most)

    def retrying(self) -> tenacity.Retrying:
        return tenacity.Retrying(**self._loop())

    def async_retrying(self) -> tenacity.AsyncRetrying:
        return tenacity.AsyncRetrying(**self._loop())

    def _loop(self) -> dict[str, Any]:
        return {
            "retry": (
                tenacity.retry_if_exception_type(httpx.TransportError)
                | tenacity.retry_if_result(should_retry)
            ),
            "stop": tenacity.stop_after_attempt(self.attempts)
            | tenacity.stop_after_delay(self.total_s),
            "wait": _ServerPaced(self.backoff(), self.total_s),
            # Out of tries: the last answer is the caller's to decode, the last error to raise.
            "retry_error_callback": _last_outcome,
        }


class _ServerPaced(tenacity.wait.wait_base):
    """The server's `Retry-After` when the last answer had one, else the backoff; never
    past the policy's total."""

    def __init__(self, backoff: tenacity.wait.wait_base, total_s: float) -> None:
        self._backoff, self._total_s = backoff, total_s

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        answered = outcome is not None and not outcome.failed
        asked = retry_after_of(outcome.result()) if answered and outcome is not None else None
        wait = self._backoff(retry_state) if asked is None else asked
        left = self._total_s - (retry_state.seconds_since_start or 0.0)
        return max(0.0, min(wait, left))


def _last_outcome(retry_state: RetryCallState) -> Any:
    """The last answer, or the last error raised again (tenacity gives up after an attempt)."""
    return retry_state.outcome.result() if retry_state.outcome is not None else None


def retry_after_of(response: httpx.Response) -> float | None:
    """The server's `Retry-After` in seconds (dates are not used by this API)."""
    raw = response.headers.get("Retry-After")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return None


def request_args(call: Call[Any], position: str | None = None) -> dict[str, Any]:
    headers = {} if call.idempotency_key is None else {IDEMPOTENCY_HEADER: call.idempotency_key}
    if position is not None:
        headers[POSITION_HEADER] = position
    args: dict[str, Any] = {"params": dict(call.params), "headers": headers}
    if call.body is not None:
        args["json"] = dict(call.body)
    return args


def _lsn(position: str) -> tuple[int, int] | None:
    high, _, low = position.partition("/")
    try:
        return int(high, 16), int(low, 16)
    except ValueError:
        return None


def later_position(known: str | None, response: httpx.Response) -> str | None:
    """The later of the position already known and the one `response` carries (positions
    are PostgreSQL WAL positions, `16/B374D848`; answers may arrive out of order)."""
    seen: str | None = response.headers.get(POSITION_HEADER)
    if seen is None or _lsn(seen) is None:
        return known
    if known is None or (_lsn(known) or (0, 0)) < (_lsn(seen) or (0, 0)):
        return seen
    return known


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
