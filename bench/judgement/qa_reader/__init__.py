"""An extractive question-answering reader of profile fields (lab only; ADR 0089).

Each (subject line, field) pair is read as a question naming the field over the line and the
agent's line before it: the answer is the words that state the field's value, or none. The
encoder is all-MiniLM-L6-v2 (every layer, fine-tuned whole) with a start/end head and per-pair
flags. Training needs torch, which is not a dependency of the product: install it by hand
(`pip install torch==2.13.0`). The pieces that need no torch (pairs, tokens, decoding,
scoring) are separate modules, tested without it.
"""
