"""The subpackages the `factledger` distribution installs, one per layer: the product's, then
the lab's (`bench`, which nothing in the product imports)."""

PRODUCT_LAYERS = (
    "domain",
    "application",
    "adapters",
    "projections",
    "api",
    "client",
    "integrations",
    "testing",
)
LAYERS = (*PRODUCT_LAYERS, "bench")
