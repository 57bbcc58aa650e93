"""Sentence judgement by small learned heads over the packaged sentence embedder."""
