"""Trains the sentence-judgement heads (`adapters/judgement`) on a labelled corpus."""
