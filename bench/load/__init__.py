"""`factledger-lab bench load`: agents on loopback against real server processes (ADR 0014)."""
