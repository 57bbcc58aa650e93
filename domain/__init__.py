"""The subject ledger's domain: the subject aggregate, its events and value objects (pure)."""
