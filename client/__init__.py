"""Typed HTTP client for backend services that use factledger (sync and async, on httpx).

```python
from factledger.client import AsyncFactledgerClient, ProposalDraft, Evidence, text

async with AsyncFactledgerClient("http://localhost:8000", token) as fl:
    context = await fl.context("supplier pricing")
    answer = await fl.recall("which supplier do they use?")
```

It never imports server modules: its models are its own.
"""

from factledger.client.async_client import AsyncFactledgerClient
from factledger.client.errors import (
    AuthenticationFailedError,
    ConflictError,
    FactledgerError,
    InvalidRequestError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    ServerUnavailableError,
    TransportFailedError,
)
from factledger.client.events import AsyncEventFollower, EventFollower, LedgerEvent
from factledger.client.models import (
    Evidence,
    ProposalDraft,
    boolean,
    day,
    items,
    money,
    number,
    text,
)
from factledger.client.sync_client import FactledgerClient
from factledger.client.transport import RetryPolicy

__all__ = [
    "AsyncEventFollower",
    "AsyncFactledgerClient",
    "AuthenticationFailedError",
    "ConflictError",
    "EventFollower",
    "Evidence",
    "FactledgerClient",
    "FactledgerError",
    "InvalidRequestError",
    "LedgerEvent",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "ProposalDraft",
    "RetryPolicy",
    "ServerUnavailableError",
    "TransportFailedError",
    "boolean",
    "day",
    "items",
    "money",
    "number",
    "text",
]
