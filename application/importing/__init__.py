"""History import: past conversations from NDJSON (or converted exports) into the ledger."""
