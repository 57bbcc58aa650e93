"""`factledger demo`: the product story (`testing.story`) told to the embedded default, and what
an agent gets from memory along it."""
