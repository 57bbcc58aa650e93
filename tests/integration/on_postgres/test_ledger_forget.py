"""tests/unit/application/ledger/test_ledger_forget.py on a PostgreSQL event store."""

from unit.application.ledger.test_ledger_forget import *  # noqa: F403
