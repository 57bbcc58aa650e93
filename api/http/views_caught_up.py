"""Read-your-writes for the reads served from the views: the caller's process catches the
views up with the log before answering (a no-op when nothing is new)."""

from __future__ import annotations

import asyncio

import structlog
from fastapi import Response

from factledger.api.bootstrap.runtime import Runtime
from factledger.application.errors import StorageFullError
from factledger.application.ledger.ports import PositionMovedError

log = structlog.get_logger(__name__)

VIEWS_BEHIND_HEADER = "Factledger-Views-Behind"


async def catch_up_before_read(ports: Runtime, response: Response) -> None:
    """Brings the views to the head of the log before a read.

    Another process that advanced the views first makes this catch-up redundant. A full disk
    stops the views from writing what is new, not from answering: the read is served from the
    views as they stand and the response says so, rather than refusing a read that needs no
    space.
    """
    try:
        await asyncio.to_thread(ports.catch_up)
    except PositionMovedError:
        pass
    except StorageFullError:
        log.warning("views.behind_on_read", error_type="StorageFullError")
        response.headers[VIEWS_BEHIND_HEADER] = "storage-full"
