"""The answer cross-encoder's trainer (torch, lab only)."""
