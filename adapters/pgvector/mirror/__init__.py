"""A process-local mirror of a namespace's facts, searched in the process."""
