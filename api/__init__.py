"""Entry points: the HTTP app, the CLI, settings and the composition root."""
