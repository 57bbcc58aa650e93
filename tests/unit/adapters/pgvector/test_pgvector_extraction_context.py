"""The pgvector ingest reads a document's extraction context back from its stored metadata,
so a queued (batched) document is extracted with its session's guidance too."""

from __future__ import annotations

from datetime import UTC, datetime

from factledger.adapters.pgvector.filters import metadata_json
from factledger.adapters.pgvector.ingest import DocumentRow, context_of
from factledger.application.memory.extraction import ExtractionContext

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)


def test_a_stored_documents_metadata_gives_back_its_context() -> None:
    context = ExtractionContext("acme", "customer", "email", "support_ticket")
    stored = metadata_json({"session_id": "t-1", **context.to_metadata()})
    assert context_of(DocumentRow("d", "batched", "[]", T0, stored)) == context


def test_a_document_without_context_reads_with_none() -> None:
    assert context_of(DocumentRow("d", "instant", "[]", T0, metadata_json({}))) == (
        ExtractionContext()
    )
    assert context_of(DocumentRow("d", "instant", "[]", T0, "")) == ExtractionContext()
