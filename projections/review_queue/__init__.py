"""The review queue projection: pending proposals in indexed rows, and the reader over them."""
