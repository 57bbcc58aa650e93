"""Fits the field heads that slot memories by the profile field they speak about."""
