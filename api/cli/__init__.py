"""The `factledger` command, one module per command group."""
