"""Field screening: what a caller writes beside the messages passes the same safety filter.

Session summaries and proposals' values, conditions and rationales reach the ledger, the
views and `context` just as messages do, so a payment card, a credential or an injection in
them is refused before anything of the request is stored. Unlike a message (dropped and
counted, the conversation goes on), a refused field fails the whole request: the caller wrote
it, and can write it again without the secret.

- Every string and number of a field is screened on its own (a card number may arrive as a
  JSON number), named by its path: `summary.next_step`, `proposals[1].condition`.
- The refusal names the field and the filter's fixed category, never the content.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

import structlog

from factledger.application.errors import ApplicationError
from factledger.application.ledger.commands import ProposeChange
from factledger.application.sessions.ports import SafetyFilter
from factledger.domain.transcript import Message, Role
from factledger.domain.values import JsonValue, to_payload

log = structlog.get_logger(__name__)
Fields = Iterator[tuple[str, str]]
# Summary keys are the caller's: a path names them only when they look like field names.
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class UnsafeFieldError(ApplicationError):
    """A summary or proposal field holds what the safety filter refuses (HTTP 422)."""

    def __init__(self, field: str, category: str) -> None:
        super().__init__(f"{field}: refused by the safety filter ({category})")
        self.field = field
        self.category = category


def leaves(path: str, value: object) -> Fields:
    """(path, text) for every string and number inside a JSON-like value."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, str | int | float):
        yield path, str(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from leaves(f"{path}.{key}" if _KEY.match(str(key)) else path, item)
    elif isinstance(value, Sequence):
        for n, item in enumerate(value):
            yield from leaves(f"{path}[{n}]", item)


def proposal_fields(prefix: str, cmd: ProposeChange) -> Fields:
    """The caller-written texts of one proposal; `prefix` is "" or "proposals[n]."."""
    if cmd.value is not None:
        yield from leaves(f"{prefix}value", to_payload(cmd.value))
    if cmd.condition is not None:
        yield f"{prefix}condition", cmd.condition
    if cmd.rationale:
        yield f"{prefix}rationale", cmd.rationale


def end_fields(
    summary: Mapping[str, JsonValue] | None, proposals: Sequence[ProposeChange]
) -> Fields:
    """The caller-written texts of a session's end: its summary and every proposal."""
    if summary is not None:
        yield from leaves("summary", summary)
    for n, cmd in enumerate(proposals):
        yield from proposal_fields(f"proposals[{n}].", cmd)


async def screen_fields(safety: SafetyFilter, fields: Fields) -> None:
    """Raises `UnsafeFieldError` for the first field the filter refuses."""
    for name, text in fields:
        verdict = await safety.screen(Message(Role.AGENT, text))
        if not verdict.allowed:
            category = verdict.category or "refused"
            log.info("safety.field_refused", field=name.split(".")[0], category=category)
            raise UnsafeFieldError(name, category)


async def screen_reason(safety: SafetyFilter, text: str | None, field: str = "reason") -> None:
    """A decision's reason or note passes the filter before it is recorded: it is kept for as
    long as the subject (sealed under the subject's key), so a card number, a credential or
    an instruction in it is refused (`UnsafeFieldError` naming `field`), like a proposal's."""
    if text:
        await screen_fields(safety, iter([(field, text)]))
