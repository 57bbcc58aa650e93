"""Snapshots of the `Subject` aggregate: a cache that bounds a process's first load.

`layout` fingerprints the state's shape, `codec` seals a subject's state under a deletable
key, `store` takes and reads snapshots, `repository` loads a subject from its newest readable
snapshot plus the events after it, or from its whole stream when there is none.
"""
