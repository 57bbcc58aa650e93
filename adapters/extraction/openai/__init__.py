"""`OpenAICompatibleExtractor`: facts from any OpenAI-compatible chat completions endpoint."""
