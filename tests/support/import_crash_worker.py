"""A `factledger import` that kills its own process (SIGKILL) right after the save that
records its n-th session: the ledger holds the session, the position does not (it is saved
after each batch), which is the worst moment an OOM kill or a lost node can pick.

Run as `python tests/support/import_crash_worker.py PATH TENANT N` with the same
`FACTLEDGER_*` settings as the `factledger import` that resumes it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path

from factledger.api.bootstrap.compose import open_runtime
from factledger.api.bootstrap.runtime import IMPORT
from factledger.api.cli.importing import content_id
from factledger.api.settings import load_settings
from factledger.application.importing.importer import (
    HistoryImport,
    ImportOptions,
    ImportPorts,
)
from factledger.application.importing.lines import NumberedLine, split_lines
from factledger.application.ledger.commands import RecordSession
from factledger.application.ledger.past_sessions import PastOutcome


async def numbered(path: Path) -> AsyncIterator[NumberedLine]:
    for line in split_lines([await asyncio.to_thread(path.read_bytes)]):
        yield line


async def main(path: Path, tenant: str, kill_after: int) -> None:
    settings = load_settings()
    async with open_runtime(settings, replace(IMPORT, backend=False)) as runtime:
        ledger, positions = runtime.ledger, runtime.imports
        assert positions is not None  # the import runtime opens it
        record, recorded = ledger.record_past_sessions, [0]

        def record_then_die(
            cmds: Sequence[RecordSession], *, stop_on_error: bool = False
        ) -> list[PastOutcome]:
            results = record(cmds, stop_on_error=stop_on_error)
            recorded[0] += sum(result is True for result in results)
            if recorded[0] >= kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            return results

        ledger.record_past_sessions = record_then_die  # type: ignore[method-assign]
        use_case = HistoryImport(ImportPorts(ledger, runtime.safety, positions, ledger.clock))
        await use_case.run(numbered(path), ImportOptions(tenant, content_id(path, None)))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
