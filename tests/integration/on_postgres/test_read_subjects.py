"""tests/unit/application/ledger/test_read_subjects.py on a PostgreSQL event store (its
streams read in one statement)."""

from unit.application.ledger.test_read_subjects import *  # noqa: F403
