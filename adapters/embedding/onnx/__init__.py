"""Sentence embeddings from the packaged ONNX models, run offline with onnxruntime."""
