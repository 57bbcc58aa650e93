"""How verbatim records are cut into searchable chunks: the same way by every self-hosted
backend."""

from __future__ import annotations


def split_chunks(text: str, max_chars: int = 1_000) -> list[str]:
    """Splits verbatim text at whitespace into pieces of at most `max_chars` (long words cut)."""
    chunks: list[str] = []
    rest = text
    while len(rest) > max_chars:
        cut = rest.rfind(" ", 0, max_chars)
        cut = cut if cut > 0 else max_chars
        chunks.append(rest[:cut])
        rest = rest[cut:]
    if rest.strip() or not chunks:
        chunks.append(rest)
    return chunks
