"""Where PostgreSQL listens: one server, or a primary and standbys in libpq's multi-host form,
and which server a read may use."""

from __future__ import annotations

import pytest

from factledger.adapters.postgres.event_store import TARGET_SESSION_ATTRS, postgres_env
from factledger.adapters.postgres.replay_position import valid_position
from factledger.adapters.postgres_server import PostgresLocation
from factledger.adapters.read_routing import (
    reading_from_standby,
    require_views_at,
    standby_allowed,
    views_floor,
    wrote_on_primary,
)


def test_one_server_keeps_its_forms() -> None:
    tcp = PostgresLocation.from_url("postgresql://app:pw@db:5433/ledger")
    assert tcp.conninfo == "dbname=ledger host=db port=5433 user=app password=pw"
    socket = PostgresLocation.from_url("postgresql://app:@:5432/ledger?host=/run/pg")
    assert (socket.host, socket.port, socket.password) == ("/run/pg", 5432, "")


def test_several_servers_and_the_role_a_session_accepts() -> None:
    url = "postgresql://app:pw@db-a:5432,db-b:5433/ledger?target_session_attrs=read-write"
    location = PostgresLocation.from_url(url)
    assert (location.host, location.port, location.alternates) == ("db-a", 5432, (("db-b", 5433),))
    assert location.conninfo == (
        "dbname=ledger host=db-a,db-b port=5432,5433 user=app password=pw "
        "target_session_attrs=read-write"
    )
    env = location.eventsourcing_env()
    assert (env["POSTGRES_HOST"], env["POSTGRES_PORT"]) == ("db-a,db-b", "5432,5433")


def test_the_event_store_is_told_which_server_to_accept() -> None:
    location = PostgresLocation.from_url("postgresql://app@a,b/ledger?target_session_attrs=primary")
    assert postgres_env(location)[TARGET_SESSION_ATTRS] == "primary"
    assert TARGET_SESSION_ATTRS not in postgres_env(PostgresLocation.from_url("postgresql://a/l"))


def test_one_port_serves_every_host_and_a_mismatch_is_refused() -> None:
    location = PostgresLocation.from_url("postgresql://app@a,b:6000/ledger")
    assert location.ports == "5432,6000"  # libpq: an empty port is the default
    with pytest.raises(ValueError, match="ports"):
        PostgresLocation.from_url("postgresql://app@a,b,c/ledger?port=1,2")


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("0/16B3748", True),
        ("16/B374D848", True),
        ("16/b374d848", True),
        ("yesterday", False),
        ("1/2/3", False),
        ("", False),
        ("123456789/0", False),
    ],
)
def test_positions_are_lsns(text: str, valid: bool) -> None:
    assert valid_position(text) is valid


def test_reads_use_the_standby_only_inside_a_routed_request_that_has_not_written() -> None:
    assert not standby_allowed()
    wrote_on_primary()  # outside a request: nothing to remember
    with reading_from_standby(True):
        assert standby_allowed()
        require_views_at(7)
        require_views_at(3)
        assert views_floor() == 7
        wrote_on_primary()
        assert not standby_allowed()
    with reading_from_standby(False):
        assert not standby_allowed()
    assert views_floor() == 0
