"""What an import did: counts, and the lines it could not import (number, field, rule).

The report holds no content (no text, no reference, no session id), only counts and line
numbers, so it may be logged, returned and stored beside the import's position.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Past this many, errors are only counted: a file of a million bad lines has one bug.
MAX_REPORTED_ERRORS = 100


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    field: str
    rule: str
    error: str  # the error type


@dataclass(slots=True)
class ImportReport:
    """Counts of one import; a resumed import continues the counts it saved.

    - `subjects`: subjects registered (existing ones are not counted);
    - `sessions` / `unchanged`: sessions recorded / already recorded with the same content;
    - `messages`, `withheld`: messages kept in recorded sessions / dropped by the safety filter
      or flagged by the file;
    - `reviews`: recorded sessions handed to the proposals step (one each, in time order);
    - `proposals`: changes the model proposed from them, when the import waited for the sync
      (None otherwise: the step runs later, on the sync queue);
    - `errors`: the first `MAX_REPORTED_ERRORS` bad lines; `error_count` counts all of them.

    After a crash, the resumed run continues from the counts saved with the position; what
    the crashed run did after it shows as `unchanged` sessions, and its registrations are not
    counted (the subjects exist already).
    """

    import_id: str | None = None
    lines: int = 0
    resumed_after: int = 0
    subjects: int = 0
    sessions: int = 0
    unchanged: int = 0
    messages: int = 0
    withheld: int = 0
    reviews: int = 0
    proposals: int | None = None
    error_count: int = 0
    errors: list[LineError] = field(default_factory=list)
    stopped: bool = False  # `on_error=stop` ended the import at its first bad line
    finished: bool = False

    def add_error(self, error: LineError) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_REPORTED_ERRORS:
            self.errors.append(error)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ImportReport:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        errors = [LineError(**e) for e in known.pop("errors", [])]
        return cls(**known, errors=errors)
