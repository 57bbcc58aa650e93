"""Typed HTTP client for backend services that use factledger."""
