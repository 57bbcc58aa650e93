"""tests/unit/application/ledger/test_rebuild_decoding.py on a PostgreSQL ledger."""

from unit.application.ledger.test_rebuild_decoding import *  # noqa: F403
