"""The profile projection: subject events -> current profile, versions, history, review queue
and sessions (`projection`), the shapes of its documents, its writes, and its readers."""
