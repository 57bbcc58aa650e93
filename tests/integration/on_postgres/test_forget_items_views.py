"""tests/unit/projections/test_forget_items_views.py on a PostgreSQL view store (ADR 0160)."""

from unit.projections.test_forget_items_views import *  # noqa: F403
