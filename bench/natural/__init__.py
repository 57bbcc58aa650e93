"""The natural-question set: agents' questions over generated multi-session subjects."""
