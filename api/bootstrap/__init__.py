"""The composition root: `Settings` -> every port. The only place that chooses adapters."""
