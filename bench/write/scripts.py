"""Runs one of the bench's scripts in an interpreter under test (ours or a baseline install's)
and reads what it printed last, as JSON: how a build times its own code in its own process."""

from __future__ import annotations

import json
import subprocess
from typing import Any


def script_json(python: str, script: str, *args: str) -> Any:
    """`python -c script args...`; its last line of output, parsed (stderr is captured too,
    so a failing script's traceback is in the raised `CalledProcessError`)."""
    out = subprocess.run(  # noqa: S603 - an interpreter the caller named, our own script
        [python, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return json.loads(out.splitlines()[-1])


def store_lines(schema: str) -> str:
    """Script lines that open the store a bench's script is given (`store`: "SQLite" or
    "PostgreSQL"; `where`: its folder, or the PostgreSQL location as JSON): its key store as
    `keys` and its ledger's environment as `env`, PostgreSQL's tables under `schema`. The
    script imports `json` and `Path` first; the lines use only names every build has."""
    return f"""if store == "SQLite":
    from factledger.adapters.sqlite.event_store import sqlite_env
    from factledger.adapters.sqlite.key_store import SqliteKeyStore
    keys = SqliteKeyStore(Path(where) / "keys.sqlite")
    env = sqlite_env(Path(where) / "ledger.sqlite")
else:
    from factledger.adapters.postgres.event_store import postgres_env
    from factledger.adapters.postgres.key_store import PostgresKeyStore
    from factledger.adapters.postgres_server import PostgresLocation
    location = PostgresLocation(**json.loads(where))
    keys = PostgresKeyStore(location.conninfo, schema="{schema}")
    env = postgres_env(location, schema="{schema}")
"""
