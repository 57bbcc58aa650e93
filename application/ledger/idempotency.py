"""What the idempotency store promises, and the types its port speaks: a retried command, on
any process, acts once (the port itself is `IdempotencyStore` in `ports`).

An entry is keyed by (tenant, principal, subject, key): two callers never see each other's
results, and neither do two subjects one caller acts on (agent tokens of one `sub` bound to
different subjects, a service working on many). It holds the request's fingerprint (an HMAC
under the deployment's key, never a plain digest of the body: `request_fingerprints`) and,
once the first request finished, its response body.

- `claim` is the only way in: it either reserves the key for this request (`CLAIMED`), or
  reports the first request's response (`REPLAY`), a different request under the same key
  (`MISMATCH`), or a first request still running (`IN_PROGRESS`). Two concurrent first requests
  can never both be `CLAIMED`: adapters insert the claim row first and read only what won.
- A claim is a lease (`lease_s`, a few seconds): a process that dies mid-request leaves a claim
  that expires, so the key can be claimed again within seconds rather than answering "in
  progress" for ever. A live request keeps its claim by calling `renew` well within the lease;
  `renew` reports False once the claim is no longer this fingerprint's (it expired and was
  taken over, or it was completed or released). A finished entry is kept `ttl_s` seconds,
  then the key is free again.
- `release` frees a claim whose request failed (so the retry runs again); `complete` stores the
  response. Both act only on the claim this fingerprint holds.
- `sweep_expired` deletes at most `limit` entries whose lease or time to live has passed
  `SWEEP_GRACE_S` ago:
  the stores replace an expired entry only when its key comes back, which most keys never do,
  so without it they would keep every response ever saved (`idempotency_sweep` runs it).
- `forget_subject` deletes every saved response of one subject of a tenant (every scope of
  that subject, whoever the principal): a forget (however recorded: asked, approved, or
  confirmed by the subject at a session's end) or an erasure leaves no replayable copy of
  what the deleted keys encrypted in the ledger. Claims still running stay. A retry
  after it runs again, and the ledger's command ids make that rerun a no-op that answers from
  the ledger's current, redacted state.
  Adapters that keep files or pages overwrite the deleted bytes before returning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, cast
from uuid import UUID

if TYPE_CHECKING:
    from factledger.application.ledger.ports import IdempotencyStore

JsonBody = dict[str, object]
WallClock = Callable[[], float]  # seconds since the epoch: leases are shared across processes

DEFAULT_TTL_S = 24 * 3600.0
# Short, because the holder renews it while its command runs: a dead process's key frees
# within this long.
DEFAULT_LEASE_S = 5.0
# `sweep_expired` deletes an entry only this long after it expired: a claim whose lease lapsed
# while its holder still runs (a renewal late under load) is still there when the holder
# completes it, as before stores were swept, so its response is saved.
SWEEP_GRACE_S = 3600.0


@dataclass(frozen=True, slots=True)
class IdempotencyScope:
    """Who used which key about whom; the store never compares keys across tenants,
    principals or subjects."""

    tenant: str
    principal: str
    subject_id: UUID
    key: str


class ClaimStatus(StrEnum):
    CLAIMED = "claimed"
    REPLAY = "replay"
    MISMATCH = "mismatch"
    IN_PROGRESS = "in_progress"


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of `claim`; `body` is set only for `REPLAY`."""

    status: ClaimStatus
    body: JsonBody | None = None


CLAIMED = Claim(ClaimStatus.CLAIMED)
MISMATCH = Claim(ClaimStatus.MISMATCH)
IN_PROGRESS = Claim(ClaimStatus.IN_PROGRESS)


def settled(fingerprint: str, stored_fingerprint: str, body: JsonBody | None) -> Claim:
    """What a live entry means for a request with `fingerprint` (shared by the adapters)."""
    if stored_fingerprint != fingerprint:
        return MISMATCH
    if body is None:
        return IN_PROGRESS
    return Claim(ClaimStatus.REPLAY, body)


def for_ledger_commands(store: IdempotencyStore) -> IdempotencyStore:
    """The store in which a command that saves ledger events (and can render its response
    from them) claims its key: where a store keeps those records beside the events, in
    another file than the others (SQLite), its `ledger_commands`; else `store`."""
    routed = getattr(store, "ledger_commands", None)
    return store if routed is None else cast("IdempotencyStore", routed)
