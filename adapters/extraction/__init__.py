"""Reading conversations: fact extraction (rules or an OpenAI-compatible model) and the
safety screen."""
