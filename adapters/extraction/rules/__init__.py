"""`RuleExtractor`: deterministic, offline extraction driven by YAML guidance."""
