"""The learned extractor: the rules' candidate facts, kept or dropped by a learned judgement."""
