"""Splitting a byte stream into numbered lines, with a digest of everything read so far.

The digest after line n is sha256 over the bytes of lines 1..n (newlines included): a
position saved with it lets a resumed import check that the file it is given starts with
the lines already imported, and a finished import's digest names the whole file's content.
Blank lines count (their numbers match an editor's) but hold no record.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass

from factledger.application.importing.format import MAX_LINE_BYTES


@dataclass(frozen=True, slots=True)
class NumberedLine:
    """Line `number` (from 1), without its newline; `digest` covers lines 1..number.
    `too_long` marks a line past `MAX_LINE_BYTES`, whose bytes were not kept."""

    number: int
    raw: bytes
    digest: str
    too_long: bool = False
    offset: int = 0  # bytes read through the end of this line (for a progress bar)

    @property
    def blank(self) -> bool:
        return not self.raw.strip()


class LineSplitter:
    """Feeds chunks in, gets complete lines out; never holds more than one line (bounded)."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self._pending = bytearray()
        self._number = 0
        self._overflow = False
        self._offset = 0

    def feed(self, chunk: bytes) -> Iterator[NumberedLine]:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._offset += len(chunk) - start
                self._hash.update(chunk[start:])
                self._keep(chunk[start:])
                return
            self._offset += end + 1 - start
            self._hash.update(chunk[start : end + 1])
            self._keep(chunk[start:end])
            yield self._emit()
            start = end + 1

    def close(self) -> Iterator[NumberedLine]:
        """The last line when the stream does not end with a newline."""
        if self._pending or self._overflow:
            yield self._emit()

    def _keep(self, part: bytes) -> None:
        if self._overflow:
            return
        self._pending += part
        if len(self._pending) > MAX_LINE_BYTES:
            # The line is reported as too long, never buffered whole.
            self._pending.clear()
            self._overflow = True

    def _emit(self) -> NumberedLine:
        self._number += 1
        raw = b"" if self._overflow else bytes(self._pending)
        digest = self._hash.hexdigest()
        line = NumberedLine(self._number, raw, digest, self._overflow, self._offset)
        self._pending.clear()
        self._overflow = False
        return line


def split_lines(chunks: Iterable[bytes]) -> Iterator[NumberedLine]:
    splitter = LineSplitter()
    for chunk in chunks:
        yield from splitter.feed(chunk)
    yield from splitter.close()


async def split_stream(chunks: AsyncIterable[bytes]) -> AsyncIterator[NumberedLine]:
    splitter = LineSplitter()
    async for chunk in chunks:
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.close():
        yield line
