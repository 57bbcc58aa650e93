"""tests/unit/application/ledger/test_ledger_commands.py on a PostgreSQL event store."""

from unit.application.ledger.test_ledger_commands import *  # noqa: F403
