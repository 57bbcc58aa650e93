"""Read models built from the subject events; each can be dropped and rebuilt."""
