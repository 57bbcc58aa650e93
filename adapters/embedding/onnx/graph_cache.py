"""`CompiledGraphCache`: the encoder graph `open_encoder` builds, kept on disk between starts.

Building the graph (`bert_graph`, and for a model we do not pin the faithfulness probe) is part
of every start that has no cache; reading it back costs a file read and a sha256
(docs/benchmarks.md compares them). One file per source model and activation mode, named
after the source model's sha256, holds a header line (the key it was built for, what its graph
does, and the payload's sha256) and the serialized graph.

- A file built for another key (a newer compiler, another onnx or onnxruntime, other options)
  is stale; a file whose payload does not hash to its header is corrupt. Both are rebuilt.
- Files are written to a temporary name and renamed, so a reader never sees half a file.
- A cache directory that cannot be created, read or written costs only the time saved: the
  graph is then compiled in memory, as without a cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any, ClassVar, Protocol

import structlog

from factledger.adapters.atomic_files import write_atomically

log = structlog.get_logger(__name__)

# Bump whenever `bert_graph`, `quantize` or `session` change the graph they build from the same
# model: every cached graph then becomes stale.
COMPILER_VERSION = 1
_MAGIC = b"factledger compiled encoder graph\n"
_MAX_HEADER = 4096


def _onnxruntime_version() -> str:
    # Imported when a key is made (by a model's load), not with this module: onnxruntime's
    # import was some 5% of the imports of a start to ready, which loads no model.
    import onnxruntime

    version: str = onnxruntime.__version__
    return version


class CacheKey(Protocol):
    """What a cached graph was built for: a dataclass (its fields are the header's key) that
    names its file."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def file_name(self) -> str: ...


@dataclass(frozen=True, slots=True)
class GraphKey:
    """What a compiled graph depends on: the source model and every option that shapes it."""

    source_sha256: str
    int8_activations: bool
    trusted: bool
    heads: int
    compiler: int = COMPILER_VERSION
    # From the installed metadata: importing `onnx` for its version cost a third of a start.
    onnx_version: str = field(default_factory=lambda: installed_version("onnx"))
    onnxruntime_version: str = field(default_factory=_onnxruntime_version)

    @property
    def file_name(self) -> str:
        activations = "int8" if self.int8_activations else "float"
        return f"{self.source_sha256}-{activations}.graph"


@dataclass(frozen=True, slots=True)
class CompiledGraph:
    """A serialized ONNX graph ready for a session; `int8_activations` says what it does,
    `compact` whether it is a compact graph (its session folds its dequantized tables),
    `metadata` the model's metadata, for a reader that must not parse the graph for it."""

    serialized: bytes
    int8_activations: bool
    compact: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)


def graph_header(graph: CompiledGraph) -> dict[str, Any]:
    """What a header line says of `graph` (a cached file's, a preparing child's answer): what
    its graph does, its metadata and its payload's sha256."""
    return {
        "int8_activations": graph.int8_activations,
        "compact": graph.compact,
        "metadata": dict(graph.metadata),
        "sha256": hashlib.sha256(graph.serialized).hexdigest(),
    }


def graph_of(payload: bytes, header: Mapping[str, Any]) -> CompiledGraph | None:
    """The graph `header` (`graph_header`) describes, or None when `payload` does not hash to
    it."""
    if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
        return None
    metadata = header.get("metadata") or {}
    return CompiledGraph(
        payload,
        bool(header.get("int8_activations")),
        compact=bool(header.get("compact")),
        metadata={str(k): str(v) for k, v in dict(metadata).items()},
    )


class CompiledGraphCache:
    """Compiled graphs in `directory`, or nowhere when it is None."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def get(self, key: CacheKey) -> CompiledGraph | None:
        """The graph built for `key`, or None when missing, stale, corrupt or unreadable."""
        if self.directory is None:
            return None
        path = self.directory / key.file_name
        try:
            with path.open("rb") as file:
                if file.readline(len(_MAGIC) + 1) != _MAGIC:
                    return _rejected("corrupt", path)
                header = json.loads(file.readline(_MAX_HEADER))
                if not isinstance(header, dict) or header.get("key") != asdict(key):
                    return _rejected("stale", path)
                payload = file.read()
        except FileNotFoundError:
            return None
        except OSError:
            return _rejected("unreadable", path)
        except ValueError:  # a header that is not JSON
            return _rejected("corrupt", path)
        graph = graph_of(payload, header)
        return graph if graph is not None else _rejected("corrupt", path)

    def put(self, key: CacheKey, graph: CompiledGraph) -> bool:
        """Stores `graph` for `key`; False (and a warning) when the directory is not writable."""
        if self.directory is None:
            return False
        header = {"key": asdict(key), **graph_header(graph)}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            parts = [_MAGIC, json.dumps(header).encode() + b"\n", graph.serialized]
            write_atomically(self.directory / key.file_name, lambda file: file.writelines(parts))
        except OSError as exc:
            log.warning("embedder.graph_cache_unwritable", error=type(exc).__name__)
            return False
        return True


def _rejected(reason: str, path: Path) -> CompiledGraph | None:
    """Nothing to use: the caller rebuilds and overwrites the file."""
    log.info("embedder.graph_cache_rejected", reason=reason, file=path.name)
    return None
