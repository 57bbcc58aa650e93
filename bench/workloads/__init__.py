"""The workloads `factledger bench` runs against every backend."""
