"""The memory port's types and the rules every backend shares: validation, ids, chunking,
filters, scoring and the extraction types."""
