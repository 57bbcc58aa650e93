"""The review queue at volume: filters, cursors, groups of identical proposals, one decision on
many changes, and the ports of the queue's indexed store."""
