"""Embedders: the packaged ONNX sentence models, an OpenAI-compatible endpoint, feature hashing."""
