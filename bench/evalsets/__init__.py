"""Scores the product on the blind evaluation sets (`bench/evalsets/blind/`): conversations
and confirmation replies written by people who never saw the extractor, its rules or its sets.
"""
