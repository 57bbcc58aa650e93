"""The memory port on Supermemory's v5 API, through the official SDK."""
