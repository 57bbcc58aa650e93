"""`factledger-lab failover`: the window of loss of a failover, with and without synchronous
replication, measured.

Each round starts a primary and a hot standby from the embedded binaries
(`factledger.testing.replication`), opens the API on them (every store on PostgreSQL, through
the multi-host URL), lets `writers` callers register subjects side by side, kills the primary's
whole process group (`kill -9`) and promotes the standby. Afterwards it looks up every
registration the API had answered 2xx: those missing are acknowledged writes lost, and the
window is how long before the kill the earliest of them was acknowledged.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from tempfile import mkdtemp

import httpx
from pydantic import SecretStr

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, TokenRequest, mint_token
from factledger.api.settings import AuthSettings, JwtKeySettings, Settings
from factledger.testing.replication import replicated_postgres

_SECRET = secrets.token_hex(32)  # a key of this run only
_AUTH = AuthSettings(
    issuer="factledger-lab",
    audience="factledger",
    keys=[JwtKeySettings(kid="lab", secret=SecretStr(_SECRET))],
    environment="test",
)


@dataclass
class RoundFigures:
    synchronous: bool
    acknowledged: int
    lost: int
    window_ms: float  # 0 without a loss
    lag_ms: float  # the standby's replay lag the primary last reported before the kill

    def row(self) -> str:
        mode = "synchronous" if self.synchronous else "asynchronous"
        return (
            f"| {mode} | {self.acknowledged} | {self.lost} | {self.window_ms:.1f} "
            f"| {self.lag_ms:.1f} |"
        )


HEADER = (
    "| replication | writes acknowledged | acknowledged writes lost | window ms "
    "| replay lag ms at the kill |\n| --- | ---: | ---: | ---: | ---: |"
)


@dataclass
class _Writer:
    number: int
    acknowledged: dict[str, float] = field(default_factory=dict)

    async def run(
        self, http: httpx.AsyncClient, headers: dict[str, str], stop: asyncio.Event
    ) -> None:
        attempt = 0
        while not stop.is_set():
            ref = f"w{self.number}-{attempt}"
            attempt += 1
            try:
                answer = await http.post(
                    "/v1/subjects", json={"kind": "lead", "external_ref": ref}, headers=headers
                )
            except httpx.TransportError:
                continue
            if answer.is_success:
                self.acknowledged[ref] = time.monotonic()
            else:
                await asyncio.sleep(0.02)


def _settings(url: str, data_dir: Path) -> Settings:
    return Settings(
        data_dir=data_dir,
        database_url=SecretStr(url),
        event_store={"kind": "postgres", "schema_name": "failover_events"},
        views={"kind": "postgres", "schema_name": "failover_views"},
        backend={"kind": "in_memory"},
        postgres={"acquire_timeout_s": 2, "connect_timeout_s": 2},
        auth=_AUTH,
    )


def _lag_ms(conninfo: str) -> float:
    import psycopg

    with psycopg.connect(conninfo, connect_timeout=3, autocommit=True) as conn:
        row = conn.execute(
            "SELECT COALESCE(EXTRACT(EPOCH FROM replay_lag) * 1000, 0) FROM pg_stat_replication"
        ).fetchone()
    return 0.0 if row is None else float(row[0])


async def one_round(*, synchronous: bool, writers: int, before_kill_s: float) -> RoundFigures:
    headers = {
        "Authorization": "Bearer "
        + mint_token(_AUTH, TokenRequest(role=Role.SERVICE, tenant="t1", principal_id="lab"))
    }
    with replicated_postgres(synchronous=synchronous) as cluster:
        async with AsyncExitStack() as stack:
            data_dir = Path(mkdtemp(prefix="factledger-failover-"))
            stack.callback(shutil.rmtree, data_dir, ignore_errors=True)
            settings = _settings(cluster.url(), data_dir)
            runtime = await stack.enter_async_context(open_runtime(settings))
            app = create_app(settings, ports=runtime)
            http = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://api", timeout=10
            )
            stack.push_async_callback(http.aclose)
            crew = [_Writer(n) for n in range(writers)]
            stop = asyncio.Event()
            tasks = [asyncio.create_task(w.run(http, headers, stop)) for w in crew]
            await asyncio.sleep(before_kill_s)
            lag = await asyncio.to_thread(_lag_ms, cluster.primary.location.conninfo)
            killed_at = time.monotonic()
            await asyncio.to_thread(cluster.primary.crash)
            await asyncio.to_thread(cluster.promote)
            await asyncio.sleep(1.0)
            stop.set()
            await asyncio.gather(*tasks)
            acknowledged = {ref: at for w in crew for ref, at in w.acknowledged.items()}
            lost_at = []
            for ref, at in acknowledged.items():
                found = await http.get(
                    "/v1/subjects/lookup",
                    params={"kind": "lead", "external_ref": ref},
                    headers=headers,
                )
                if found.status_code == 404:
                    lost_at.append(at)
                elif not found.is_success:
                    raise RuntimeError(f"lookup failed: {found.status_code}")
    window = (killed_at - min(lost_at)) * 1000 if lost_at else 0.0
    return RoundFigures(synchronous, len(acknowledged), len(lost_at), window, lag)


def run(
    *, rounds: int, writers: int, before_kill_s: float, echo: Callable[[str], None]
) -> list[RoundFigures]:
    echo(HEADER)
    figures = []
    for _ in range(rounds):
        for synchronous in (False, True):
            line = asyncio.run(
                one_round(synchronous=synchronous, writers=writers, before_kill_s=before_kill_s)
            )
            figures.append(line)
            echo(line.row())
    return figures
