"""Names and session options shared by the graph compiler and the session, in a module of
their own so that opening a session from a cached graph never imports `onnx`, a large part of
a cold start."""

TOKEN_TYPES = "token_type_ids"  # noqa: S105 - an input name, not a secret
# onnxruntime would fuse each residual Add + Add + LayerNormalization back into
# SkipLayerNormalization, whose CPU kernel is slower than the three nodes it replaces on short
# queries.
SLOWER_FUSIONS = ("SkipLayerNormFusion",)
# onnxruntime keeps a `DequantizeLinear` for its QDQ fusions rather than folding it, so the whole
# word table would be dequantized on every run, a cost every query pays; with its QDQ handling
# off, the constant folding does it once, at session start, faster than a Cast and Mul would.
# A compact graph has no QDQ pairs for those fusions to find.
FOLD_DEQUANTIZE = ("session.disable_quant_qdq", "1")
