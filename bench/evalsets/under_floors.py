"""`python -m factledger.bench.evalsets.under_floors DIR [DIR...] --floors F [F...]`: the right
notes and stale notes of recall at each floor for rows under the threshold (ADR 0150), on
blind sets' **dev** halves (it reads the cases; never a held-out half).

The cases are played once, as the scorer plays them (`run.run_case`, the learned extractor
and judgement); at every question recall is asked once per floor over the same ledger and
backend (the policy's `under_floor` replaced, `None` for "off"), and each answer is counted
by the scorer's rules (`question_losses`: the right note in the top 3, a stale note in the top
3). The scorer's own answer is the product default's; the other floors are only counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from uuid import UUID

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import Needs
from factledger.api.log_setup import configure_logging
from factledger.application.recall.policy import RecallPolicies
from factledger.application.recall.service import Recall
from factledger.application.recall.types import RecallResult
from factledger.bench.evalsets.cases import load_cases
from factledger.bench.evalsets.question_losses import TOP, _stale_in, recall_replaced
from factledger.bench.evalsets.run import blind_settings, run_case
from factledger.bench.evalsets.score import holds_all
from factledger.testing.manual_clock import ManualClock


@dataclass(slots=True)
class FloorRecorder:
    floors: tuple[float | None, ...]
    answers: list[dict[float | None, RecallResult]] = field(default_factory=list)


@contextmanager
def recording_floors(recorder: FloorRecorder) -> Iterator[None]:
    """Beside every recall while open, the same recall at each of the recorder's floors."""
    original = Recall.recall

    async def recall(self: Recall, subject_id: UUID, query: str, **kw: Any) -> RecallResult:
        result = await original(self, subject_id, query, **kw)
        policy = self.ports.policies.for_tenant(kw.get("tenant"))
        at: dict[float | None, RecallResult] = {}
        for floor in recorder.floors:
            policies = RecallPolicies(default=replace(policy, under_floor=floor))
            other = Recall(replace(self.ports, policies=policies))
            at[floor] = await original(other, subject_id, query)
        recorder.answers.append(at)
        return result

    with recall_replaced(recall, original):
        yield


async def floors_of(directory: Path, floors: Sequence[float | None]) -> dict[str, Any]:
    """Right and stale questions at each floor, on one dev half."""
    if "heldout" in directory.parts:
        raise SystemExit("under_floors reads the cases: dev halves only")
    cases = load_cases(directory)
    right = dict.fromkeys(floors, 0)
    stale = dict.fromkeys(floors, 0)
    answered = 0
    clock = ManualClock(min(s.at for c in cases for s in c.sessions))
    needs = Needs(sessions=False, idempotency=False, run_sync=False, imports=False)
    with tempfile.TemporaryDirectory(prefix="factledger-floors-") as data_dir:
        settings = blind_settings(Path(data_dir), {"kind": "learned"}, "bare")
        async with open_runtime(settings, needs, clock=clock) as runtime:
            for case in cases:
                recorder = FloorRecorder(tuple(floors))
                with recording_floors(recorder):
                    run = await run_case(runtime, clock, case)
                asked = [run.case.sessions[a.session].questions[a.index] for a in run.asked]
                for q, at in zip(asked, recorder.answers, strict=True):
                    answered += bool(q.answer)
                    for floor, result in at.items():
                        notes = [n.text for n in result.notes[:TOP]]
                        right[floor] += bool(q.answer) and any(
                            holds_all(t, q.answer) for t in notes
                        )
                        stale[floor] += bool(q.stale) and any(_stale_in(t, q) for t in notes)
    return {
        "set": directory.parent.name,
        "answered": answered,
        "right": {str(f): n for f, n in right.items()},
        "stale": {str(f): n for f, n in stale.items()},
    }


def _floor(text: str) -> float | None:
    return None if text.lower() in ("none", "off") else float(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m factledger.bench.evalsets.under_floors")
    parser.add_argument("sets", nargs="+", type=Path, help="blind sets' dev directories")
    parser.add_argument(
        "--floors", nargs="+", type=_floor, required=True, help="floors to count ('off': none)"
    )
    args = parser.parse_args(argv)
    configure_logging(json_lines=False, level="WARNING")
    out = [asyncio.run(floors_of(d, args.floors)) for d in args.sets]
    print(json.dumps(out, indent=2))  # noqa: T201 - the command's output


if __name__ == "__main__":
    main()
