"""Recall: what an agent gets at the start of a session and on every turn, within a budget."""
