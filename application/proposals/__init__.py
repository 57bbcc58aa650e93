"""The product's own proposals: a model reads every recorded session and proposes changes."""
