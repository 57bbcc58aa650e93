"""Errors of the application layer. Messages name fields and ids, never content.

Every error a use case or a port raises derives from `ApplicationError`; the domain's rules
raise `domain.errors.DomainError` instead. A store that cannot reach its database raises a
`StoreUnavailableError` (each port has its own subclass), so the API maps the whole family
once, to 503 with `Retry-After`.
"""

from __future__ import annotations


class ApplicationError(Exception):
    """Base class of every error raised by a use case or a port."""


class NotFoundError(ApplicationError):
    """There is no such subject, record or memory (in this tenant or namespace)."""


class ConcurrencyError(ApplicationError):
    """Another writer moved the subject on and the command could not be retried safely."""


class StoreUnavailableError(ApplicationError):
    """A store's database cannot be reached or failed mid-call; retrying later may succeed.

    Adapters raise the subclass of their port and keep the driver error as `__cause__` (never
    in the message: it can name hosts).
    """


class MemoryBackendError(ApplicationError):
    """Base class of the errors that cross the memory port."""


class MemoryUnavailableError(MemoryBackendError, StoreUnavailableError):
    """The backend cannot be reached or refused to serve (5xx, out of credits, forbidden)."""


class MemoryTimeoutError(MemoryBackendError):
    """The backend did not answer within the time allowed."""


class InvalidMemoryInputError(MemoryBackendError):
    """A request to the memory port is malformed; the message names the field and the rule."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class MemoryNotFoundError(MemoryBackendError, NotFoundError):
    """The namespace holds no such record, memory or document."""


class MemoryConflictError(MemoryBackendError):
    """A write collides with what is stored (e.g. a record id reused with another body)."""
