"""Sentence judgement by small learned heads over the packaged sentence embedder (ADR 0058)."""
