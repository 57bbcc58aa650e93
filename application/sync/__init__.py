"""The sync from the ledger to the memory backend: worker, feed, plan, apply, forget."""
