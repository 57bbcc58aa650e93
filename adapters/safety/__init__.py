"""The default `SafetyFilter`, built on maintained detector libraries."""
