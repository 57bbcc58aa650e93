"""The HTTP API: the FastAPI app, its dependencies, errors, middleware, routes and schemas."""
