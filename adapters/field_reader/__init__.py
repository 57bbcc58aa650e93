"""Which profile field a sentence speaks about: a head fitted over the shipped embedder."""
