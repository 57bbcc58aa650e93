"""`FieldFloors`: the QA reader's floor for each field that has one of its own (ADR 0152).

One floor for every field asks the same margin over "no value" of a field the reader reads
well as of one it reads badly. A field with enough labelled spans in the training
conversations' kept-out cases gets its own floor there, its precision shrunk towards its
kind's (`python -m factledger.bench.judgement.qa_reader.field_floors`); any other field keeps
the reader's floor. Margins are one reader file's, so the file names the reader's SHA-256 and
is read only beside that reader. The file is JSON, pinned by its own SHA-256. No file ships:
the packaged reader's fitted floors failed ADR 0152's adoption rule on writers the fit never
read; a deployment may fit and give its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from factledger.adapters.pinned_files import read_pinned


class FieldFloorsError(RuntimeError):
    """The field floors file is missing, differs from its pin, or is not a floors file."""


def _floors(raw: object, what: str) -> Mapping[str, float]:
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, int | float) and -20 <= v <= 20 for k, v in raw.items()
    ):
        raise FieldFloorsError(f"field floors file: {what} is not a map of fields to floors")
    return MappingProxyType({k: float(v) for k, v in raw.items()})


@dataclass(frozen=True, slots=True)
class FieldFloors:
    """Floors of their own: `single` for single-valued fields, `lists` for list fields, each
    fitted for the reader file whose SHA-256 is `reader_sha256`."""

    reader_sha256: str
    single: Mapping[str, float] = field(default_factory=dict)
    lists: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> FieldFloors:
        raw = read_pinned(path, sha256, FieldFloorsError, "field floors file")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise FieldFloorsError(f"field floors file {path.name}: not JSON") from exc
        if not isinstance(data, dict) or not isinstance(data.get("reader_sha256"), str):
            raise FieldFloorsError(f"field floors file {path.name}: names no reader")
        return cls(
            data["reader_sha256"],
            _floors(data.get("single", {}), "single"),
            _floors(data.get("lists", {}), "lists"),
        )

    def of(self, field_name: str, *, is_list: bool) -> float | None:
        """The field's own floor; None: it keeps the reader's."""
        return (self.lists if is_list else self.single).get(field_name)
