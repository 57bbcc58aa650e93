"""`factledger demo`: the ledger's story, scripted, and what an agent gets from memory along it."""
