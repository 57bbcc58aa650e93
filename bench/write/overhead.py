"""The cost around a request, in process: sequential appends through the whole app (the
embedded default's runtime, rate limits and idempotency keys on) on an in-process transport,
so no network, HTTP parsing or other client shares the figure. Each build runs the same
script in its own interpreter; `Server-Timing` splits this build's time (a build that sends
only `app` shows the whole)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from factledger.bench.machine import load_average
from factledger.bench.write.scripts import script_json

APPENDS = 600
WARM_UP = 100

# Runs in the interpreter under test: only names that every build has.
_OVERHEAD = """
import asyncio, json, logging, os, statistics, sys, uuid
from datetime import timedelta
work, appends, warm_up = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.environ.update({
    "FACTLEDGER_DATA_DIR": work, "FACTLEDGER_EMBEDDER__KIND": "hashing",
    "FACTLEDGER_AUTH__ENVIRONMENT": "test", "FACTLEDGER_AUTH__ISSUER": "bench",
    "FACTLEDGER_AUTH__KEYS": json.dumps([{"kid": "bench", "secret": "x" * 48}]),
    # The buckets are checked on every request, as deployed, but never run out here.
    "FACTLEDGER_API__RATE_LIMIT__PRINCIPAL_BURST": "1000000",
    "FACTLEDGER_API__RATE_LIMIT__PRINCIPAL_PER_S": "1000000",
    "FACTLEDGER_API__RATE_LIMIT__TENANT_BURST": "1000000",
    "FACTLEDGER_API__RATE_LIMIT__TENANT_PER_S": "1000000",
})
import httpx, structlog
from factledger.api.bootstrap.compose import open_runtime
from factledger.api.http.app import create_app
from factledger.api.http.auth import Role, SubjectClaim, TokenRequest, mint_token
from factledger.api.settings import Settings

def timing(header):
    found = {}
    for entry in header.split(","):
        name, _, param = entry.strip().partition(";")
        if param.startswith("dur="):
            found[name] = float(param[4:])
    return found

async def main():
    settings = Settings()
    day = timedelta(hours=1)
    agent = mint_token(settings.auth, TokenRequest(
        Role.AGENT, "bench", "agent", SubjectClaim(kind="lead", ref="r1"), day))
    service = mint_token(settings.auth, TokenRequest(Role.SERVICE, "bench", "svc", None, day))
    async with open_runtime(settings) as runtime:
        app = create_app(settings, ports=runtime)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
            as_agent = {"Authorization": f"Bearer {agent}"}
            body = {"kind": "lead", "external_ref": "r1"}
            as_service = {"Authorization": f"Bearer {service}"}
            await http.post("/v1/subjects", json=body, headers=as_service)
            path = "/v1/subjects/me/sessions"
            await http.post(path, json={"session_id": "s1", "channel": "chat"}, headers=as_agent)
            parts = {"app": [], "use": [], "idem": [], "outside": []}
            for n in range(appends + warm_up):
                keyed = {**as_agent, "Idempotency-Key": uuid.uuid4().hex}
                said = {"role": "subject", "text": f"Message {n}."}
                answer = await http.post(path + "/s1/messages", json=said, headers=keyed)
                answer.raise_for_status()
                if n < warm_up:
                    continue
                found = timing(answer.headers.get("server-timing", ""))
                for name in ("app", "use", "idem"):
                    if name in found:
                        parts[name].append(found[name])
                if "use" in found:
                    parts["outside"].append(found["app"] - found["use"] - found.get("idem", 0.0))
    print(json.dumps({k: statistics.median(v) if v else None for k, v in parts.items()}))

logging.disable(logging.CRITICAL)
structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
asyncio.run(main())
"""


@dataclass(frozen=True, slots=True)
class OverheadFigures:
    build: str
    app_ms: float
    use_case_ms: float | None
    idempotency_ms: float | None
    outside_ms: float | None
    load_average: str


def measure_overhead(workdir: Path, python: str, build: str) -> OverheadFigures:
    workdir.mkdir(parents=True, exist_ok=True)
    found = script_json(python, _OVERHEAD, str(workdir), str(APPENDS), str(WARM_UP))
    return OverheadFigures(
        build, found["app"], found["use"], found["idem"], found["outside"], load_average()
    )
