"""tests/unit/application/ledger/test_older_lines_shredded.py on PostgreSQL's event and key
stores."""

from unit.application.ledger.test_older_lines_shredded import *  # noqa: F403
