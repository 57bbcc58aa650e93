"""tests/unit/application/ledger/test_ledger_forget_generations.py on PostgreSQL's event and
key stores."""

from unit.application.ledger.test_ledger_forget_generations import *  # noqa: F403
