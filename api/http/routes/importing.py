"""`POST /v1/import`: past conversations as an NDJSON body, streamed.

The body is read as it arrives, line by line (never whole: an import may be any size), and
goes through the same use case as `factledger import`. Services and admins only; the subjects
are the token's tenant's. With `import_id`, a resent body resumes after the lines an earlier
request handled; without one, a resent body is re-checked line by line and records nothing
twice either way.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from factledger.api.http.deps import Operator, StateDep
from factledger.api.http.errors import ServiceUnavailableError
from factledger.api.http.paths import IMPORT_PATH
from factledger.api.http.schemas.common import ERRORS
from factledger.api.http.schemas.importing import ImportReportOut
from factledger.application.importing.importer import (
    HistoryImport,
    ImportOptions,
    ImportPorts,
    OnError,
)
from factledger.application.importing.lines import split_stream

IMPORT_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,128}$"
NDJSON_BODY = {
    "requestBody": {
        "required": True,
        "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        "description": "One JSON record per line: `subject` and `session` records "
        "(docs/import-format.md).",
    }
}

router = APIRouter(tags=["import"], responses=ERRORS)  # type: ignore[arg-type]


@router.post(
    IMPORT_PATH,
    summary="Import past conversations (NDJSON, streamed): idempotent and resumable",
    openapi_extra=NDJSON_BODY,
)
async def import_history(
    request: Request,
    principal: Operator,
    state: StateDep,
    import_id: Annotated[
        str | None,
        Query(
            pattern=IMPORT_ID_PATTERN,
            description="Names the import, so a resent body resumes where the last one stopped "
            "(the content's sha256 is a good choice).",
        ),
    ] = None,
    on_error: Annotated[
        OnError, Query(description="`skip` a bad line and go on, or `stop` there.")
    ] = OnError.SKIP,
) -> ImportReportOut:
    """Records each session whole (its messages screened by the safety filter) with the
    times it carries; a bad line is reported with its number and field. The proposals step
    and the sync to the memory backend run afterwards, on the sync queue."""
    runtime = state.require_ports()
    if runtime.imports is None:
        raise ServiceUnavailableError("the import position store is not configured")
    ledger = runtime.ledger
    use_case = HistoryImport(ImportPorts(ledger, runtime.safety, runtime.imports, ledger.clock))
    options = ImportOptions(principal.tenant, import_id, on_error)
    report = await use_case.run(split_stream(request.stream()), options)
    return ImportReportOut.model_validate(report.to_json())
