"""tests/unit/application/ledger/test_tenant_of.py on a PostgreSQL event store."""

from unit.application.ledger.test_tenant_of import *  # noqa: F403
