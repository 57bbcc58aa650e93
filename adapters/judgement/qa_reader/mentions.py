"""`QaFieldMentions`: whether a sentence speaks of a field, read by the QA reader (ADR 0218).

A request to forget ("delete that bit about me being allergic to ibuprofen") states no value
a field's floor would propose, yet the reader still scores, for each field, its best span
over "no value": far under the floor, but far less so for the field the sentence concerns
than for the others. A field is spoken of when that best margin reaches `floor`, a bar of
the file's own scale (`PACKAGED_MENTION_FLOOR` for the packaged file). The reader asks every
field of a pass at once, each in its own words, so a field's margin depends on the others
asked beside it: the bar was fitted on readings of a kind's whole field list, and is read so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from factledger.adapters.judgement.qa_reader.reader import LineRead, QaFieldReader

# The lowest best margin at which the packaged reader (ADR 0213) speaks of a field: on the
# thirteen blind dev halves' requests placed by meaning, the bar under which 16 of the 79
# placed on a field the writer did not name fall and 1 of the 96 placed right (ADR 0218).
PACKAGED_MENTION_FLOOR = -20.0


@dataclass(frozen=True, slots=True)
class QaFieldMentions:
    """Implements `FieldMentions` with `reader`, at `floor` on its margins."""

    reader: QaFieldReader
    floor: float

    def margins_sync(self, sentence: str, fields: Sequence[str]) -> list[float]:
        """Each field's best margin over "no value" in the sentence (-inf: no span read)."""
        found = self.reader.answers_sync(
            [LineRead(0, sentence, "")], list(fields), floor=float("-inf")
        )
        best = dict.fromkeys(fields, float("-inf"))
        for answer in found:
            best[answer.field] = max(best[answer.field], answer.margin)
        return [best[f] for f in fields]

    async def speaks_of(self, sentence: str, fields: Sequence[str]) -> list[bool]:
        if not fields or not sentence.strip():
            return [False] * len(fields)
        margins = await asyncio.to_thread(self.margins_sync, sentence, fields)
        return [m >= self.floor for m in margins]
