"""Local stand-ins for external services, shared by the tests and the benchmark."""
