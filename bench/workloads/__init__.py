"""The workloads `factledger-lab bench` runs against every backend."""
