"""Short-term memory: active sessions, buffered per turn, recorded once at the end."""
