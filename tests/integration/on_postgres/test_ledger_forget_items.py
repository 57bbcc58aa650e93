"""tests/unit/application/ledger/test_ledger_forget_items.py on PostgreSQL's event and key
stores (ADR 0160)."""

from unit.application.ledger.test_ledger_forget_items import *  # noqa: F403
