"""`factledger-lab bench`: the same workloads run against every memory backend, side by side.

The outermost layer beside `factledger.api`: it may use every adapter, and nothing imports it
except the CLI.
"""
