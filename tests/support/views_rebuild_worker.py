"""A process that rebuilds the profile views of a PostgreSQL ledger, for a test to SIGKILL.

argv: the server's location (JSON), the ledger's schema, the views' schema, the page size.
"""

from __future__ import annotations

import json
import sys

from factledger.adapters.postgres.event_store import postgres_env
from factledger.adapters.postgres.key_store import PostgresKeyStore
from factledger.adapters.postgres.view_store import PostgresViewStore
from factledger.adapters.postgres_server import PostgresLocation
from factledger.application.ledger.ledger import Ledger
from factledger.projections.profile_projection import ProfileProjection


def main() -> None:
    where, ledger_schema, views_schema, page = sys.argv[1:5]
    location = PostgresLocation(**json.loads(where))
    keys = PostgresKeyStore(location.conninfo, schema=ledger_schema)
    ledger = Ledger(postgres_env(location, schema=ledger_schema), keys=keys)
    store = PostgresViewStore(location.conninfo, "profile", schema=views_schema)
    ProfileProjection(store).rebuild(ledger, page=int(page))


if __name__ == "__main__":
    main()
