"""The one-pass QA reader of profile fields (ADR 0106, 0107): every field of a subject's line
asked at once, each field's value read off the line as a span, by a fine-tuned
all-MiniLM-L6-v2 exported to int8 ONNX and run with onnxruntime (no torch)."""
