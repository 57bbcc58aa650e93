"""The console's pages, one module per area: sign-in, the review queue, subjects, operations."""
