"""A view transaction whose documents stay in memory until commit (SQLite and PostgreSQL).

A projection's page reads the same few documents many times (a subject's record once per
proposal) and writes some of them several times (a change, then its decision); with a
statement per read and per write, the statements and their JSON were half of a rebuild. A
`BufferedViewTransaction` reads a document from the database at most once per transaction,
keeps every write in memory, and hands the adapter only the last state of each written
document, to write in one batched statement before the position (`take_writes`).

Documents are held as JSON text, so every `get` and `scan` returns a fresh object: a caller
that changes what it read changes nothing until it puts it, as with a database. The
database cannot change under an open transaction (the adapters hold the projection's write
lock for it), so what was read once stays true until this transaction writes it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from factledger.application.json_text import loads
from factledger.domain.values import JsonObject

LoadOne = Callable[[str, str], str | None]
LoadPrefix = Callable[[str, str], list[tuple[str, str]]]
LoadMany = Callable[[str, Sequence[str]], dict[str, str]]
Encode = Callable[[JsonObject], str]


@dataclass(frozen=True, slots=True)
class Writes:
    """What a transaction leaves behind: documents as JSON text, and addresses deleted."""

    puts: list[tuple[str, str, str]] = field(default_factory=list)
    deletes: list[tuple[str, str]] = field(default_factory=list)


class BufferedViewTransaction:
    """A `ViewTransaction` over loader callbacks; the adapter writes `take_writes()`."""

    def __init__(
        self,
        load_one: LoadOne,
        load_prefix: LoadPrefix,
        encode: Encode,
        position: int,
        load_many: LoadMany | None = None,
    ) -> None:
        self._load_one, self._load_prefix, self._encode = load_one, load_prefix, encode
        self._load_many = load_many
        self.start_position = self.new_position = position
        # (view, key) -> the document's text as read or written; None: absent or deleted.
        self._texts: dict[tuple[str, str], str | None] = {}
        # view -> key -> text written (None: deleted), and the same keys, for scans: sorted
        # when a scan needs them (views in `_unsorted` gained keys since), not at every write
        # (a rebuild's page writes a thousand documents and scans a few prefixes, if any).
        self._written: dict[str, dict[str, str | None]] = {}
        self._written_keys: dict[str, list[str]] = {}
        self._unsorted: set[str] = set()
        # (view, prefix) -> the keys the database held under it when first scanned.
        self._scanned: dict[tuple[str, str], list[str]] = {}

    def get(self, view: str, key: str) -> JsonObject | None:
        address = (view, key)
        try:
            text = self._texts[address]
        except KeyError:
            text = self._texts[address] = self._load_one(view, key)
        return None if text is None else cast("JsonObject", loads(text))

    def get_many(self, view: str, keys: Sequence[str]) -> dict[str, JsonObject]:
        missing = [key for key in dict.fromkeys(keys) if (view, key) not in self._texts]
        if missing and self._load_many is not None:
            loaded = self._load_many(view, missing)
            for key in missing:
                self._texts[(view, key)] = loaded.get(key)
        found = {key: self.get(view, key) for key in keys}
        return {key: doc for key, doc in found.items() if doc is not None}

    def put(self, view: str, key: str, doc: JsonObject) -> None:
        self._write(view, key, self._encode(doc))

    def put_each(self, addresses: Sequence[tuple[str, str]], doc: JsonObject) -> None:
        # One encoding for all: a proposal is the same document in the change view and the
        # queue, and a rebuild encodes every proposal.
        text = self._encode(doc)
        for view, key in addresses:
            self._write(view, key, text)

    def delete(self, view: str, key: str) -> None:
        self._write(view, key, None)

    def _write(self, view: str, key: str, text: str | None) -> None:
        self._texts[(view, key)] = text
        written = self._written.setdefault(view, {})
        if key not in written:
            self._written_keys.setdefault(view, []).append(key)
            self._unsorted.add(view)
        written[key] = text

    def scan(self, view: str, prefix: str) -> list[tuple[str, JsonObject]]:
        stored = self._scanned.get((view, prefix))
        if stored is None:
            rows = self._load_prefix(view, prefix)
            for key, text in rows:
                # A document this transaction wrote keeps its written state.
                self._texts.setdefault((view, key), text)
            stored = self._scanned[(view, prefix)] = [key for key, _ in rows]
        keys = set(stored)
        written = self._written_keys.get(view, [])
        if view in self._unsorted:
            written.sort()
            self._unsorted.discard(view)
        at = bisect_left(written, prefix)
        while at < len(written) and written[at].startswith(prefix):
            keys.add(written[at])
            at += 1
        found = []
        for key in sorted(keys):
            held = self._texts[(view, key)]
            if held is not None:
                found.append((key, cast("JsonObject", loads(held))))
        return found

    def position(self) -> int:
        return self.new_position

    def advance(self, position: int) -> None:
        self.new_position = position

    def take_writes(self) -> Writes:
        """The last state of every document written since the previous call; what was read is
        forgotten too, since the caller may let another transaction write before the next."""
        writes = Writes()
        for view, docs in self._written.items():
            for key, text in docs.items():
                if text is None:
                    writes.deletes.append((view, key))
                else:
                    writes.puts.append((view, key, text))
        self._written.clear()
        self._written_keys.clear()
        self._unsorted.clear()
        self.forget_reads()
        return writes

    def forget_reads(self) -> None:
        """Drops what was read: another transaction on this connection (a savepoint nested in
        this one) may have written since. Only with nothing written since `take_writes`."""
        self._texts.clear()
        self._scanned.clear()
