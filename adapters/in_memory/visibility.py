"""The visibility flags of a namespace's facts as arrays, so a memories search with a keyword
lift tells the visible facts in a few array operations instead of a Python test per fact.

Per fact, that test was most of a lifted search's time in a large subject. The arrays are a
copy of the facts' own fields, kept in step by the facts themselves: a `StoredFact` registered
here reports every change of a flag (`StoredFact.__setattr__`), so no writer of the backend can
forget to update them. Metadata filters stay a Python test (they are arbitrary), run only for
the searches that have one.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import numpy.typing as npt

from factledger.application.clocks import epoch_microseconds
from factledger.application.memory.types import SearchQuery

if TYPE_CHECKING:
    from factledger.adapters.in_memory.store import StoredFact

# The flags a search's visibility reads (`StoredFact.hidden`, `keywords.visible_fact`).
TRACKED = frozenset({"is_latest", "is_inference", "forgotten", "expires_at"})
_NEVER = np.iinfo(np.int64).max  # no expiry
G = TypeVar("G", bound=np.generic)


class VisibilityColumns:
    """One row per fact, in the order the facts were added (`NamespaceState.fact_rows`)."""

    def __init__(self) -> None:
        self._size = 0
        self._latest: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._inference: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._forgotten: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._expires: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return self._size

    def add(self, fact: StoredFact) -> int:
        """The fact's row; its later flag changes reach `update` through the fact."""
        if self._size == len(self._latest):
            self._grow(max(64, 2 * self._size))
        position = self._size
        self._size += 1
        self._write(position, fact)
        return position

    def update(self, position: int, fact: StoredFact) -> None:
        self._write(position, fact)

    def mask(self, query: SearchQuery, now: datetime) -> npt.NDArray[np.bool_]:
        """Whether each fact is visible to `query` at `now`, filters aside."""
        n = self._size
        visible = np.ones(n, dtype=np.bool_)
        if not query.include_superseded:
            visible &= self._latest[:n]
        if not query.include_inferred:
            visible &= ~self._inference[:n]
        if not query.include_forgotten:
            visible &= ~self._forgotten[:n]
            visible &= self._expires[:n] > epoch_microseconds(now)
        return visible

    def _write(self, position: int, fact: StoredFact) -> None:
        self._latest[position] = fact.is_latest
        self._inference[position] = fact.is_inference
        self._forgotten[position] = fact.forgotten
        expires = fact.expires_at
        self._expires[position] = _NEVER if expires is None else epoch_microseconds(expires)

    def _grow(self, capacity: int) -> None:
        self._latest = _grown(self._latest, self._size, capacity)
        self._inference = _grown(self._inference, self._size, capacity)
        self._forgotten = _grown(self._forgotten, self._size, capacity)
        self._expires = _grown(self._expires, self._size, capacity)


def _grown(array: npt.NDArray[G], size: int, capacity: int) -> npt.NDArray[G]:
    bigger = np.zeros(capacity, dtype=array.dtype)
    bigger[:size] = array[:size]
    return bigger
