"""What recall needs to know of a forgotten field until, and after, the backend acts on it."""

from __future__ import annotations

from dataclasses import dataclass

from factledger.domain.values import Immutable


@dataclass(frozen=True, slots=True)
class ForgetMark(Immutable):
    """The latest forget of a field: the subject's version at that forget and where the
    field's words were said (session id, message index), ids only.

    The sync forgets the backend memories of the field's slot and of those words; a memory
    from a session recorded at or after `version` came later and is not the forget's concern.
    """

    version: int
    evidence: frozenset[tuple[str, int]] = frozenset()
