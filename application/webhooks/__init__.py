"""Webhooks: the tenant's events pushed to configured endpoints, signed, retried, logged."""
