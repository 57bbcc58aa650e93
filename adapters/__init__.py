"""One module per technology, each implementing one or more application ports."""
