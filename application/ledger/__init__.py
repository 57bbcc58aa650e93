"""The subject ledger: its use cases, commands, read models and the ports they need."""
