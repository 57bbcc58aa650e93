"""tests/unit/application/ledger/test_ledger_forget_finished.py on PostgreSQL's event and key
stores."""

from unit.application.ledger.test_ledger_forget_finished import *  # noqa: F403
