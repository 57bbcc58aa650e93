"""Who reads an event's content: the roles that read subjects, not analysts."""

from __future__ import annotations

from factledger.api.http.auth import Principal, Role
from factledger.api.http.event_views import reads_content


def test_only_roles_that_read_subjects_get_content() -> None:
    allowed = {role for role in Role if reads_content(Principal("p", "t1", role))}
    assert allowed == {Role.SERVICE, Role.ADMIN, Role.REVIEWER}
