"""The model's review of each recorded session: the product's own extractor reads the
conversation and proposes profile changes, which people then decide."""
