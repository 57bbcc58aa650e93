"""How far one PostgreSQL primary goes: the capacity benchmark (`factledger-lab capacity`)."""
