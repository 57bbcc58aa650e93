"""tests/unit/application/ledger/test_ledger_forget_evidence.py on a PostgreSQL event store."""

from unit.application.ledger.test_ledger_forget_evidence import *  # noqa: F403
