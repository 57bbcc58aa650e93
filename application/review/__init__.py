"""The review queue at volume: filters, cursors, groups of identical proposals, and its ports."""
