"""Followers of tests/unit/projections/test_follower.py on twin PostgreSQL view store handles."""

from unit.projections.test_follower import (  # noqa: F401
    test_two_followers_of_one_projection_never_apply_an_event_twice,
)
