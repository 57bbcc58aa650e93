"""Which callers read an event's content: the roles that read subjects and proposals.

Analysts read the history's shape without it, as they read the review queue.
"""

from __future__ import annotations

from factledger.api.http.auth import Principal, Role

_READS_CONTENT = frozenset({Role.SERVICE, Role.ADMIN, Role.REVIEWER})


def reads_content(principal: Principal) -> bool:
    return principal.role in _READS_CONTENT
