"""tests/unit/projections/test_profile_views.py on a PostgreSQL view store."""

from unit.projections.test_profile_views import *  # noqa: F403
