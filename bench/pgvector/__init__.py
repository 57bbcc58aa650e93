"""`factledger-lab pgvector bench`: pgvector and the in-memory backend on the same synthetic
subjects."""
