"""Request and response shapes of the HTTP API, one module per resource."""
