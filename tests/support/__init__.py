"""Test support: ready-made API ports and tokens, and processes the integration tests kill."""
