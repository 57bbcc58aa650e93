"""`ForgetReader`: whether a subject's sentence asks the service to forget something, read by a
fine-tuned encoder beside the judgement heads' forget flag (ADR 0165).

The flag reads a sentence's vector and words; "My wife asked her bank to delete all her
details", "Would you remove my records if I asked?" and "please delete my details" share most
of both. The reader, an encoder fine-tuned on (`QUESTION`, sentence) pairs, reads how the
words stand to one another: all-MiniLM-L6-v2 as a cross-encoder (`.onnx`), or the packaged
multilingual encoder tuned as the answer judge is (`.npz`). A sentence is a request when the
flag reads it at or above the file's `gate` and the reader at or above its `yes_min`; the
reader runs only on the sentences the gate passes, each alone (an int8 graph quantises a
run's activations over everything in it, ADR 0155). Both thresholds were chosen on training
sentences neither model saw (`python -m factledger.bench.judgement.forget_reader fit`) and
ride in the file's metadata; its SHA-256 is checked before onnxruntime reads a byte of it.
The packaged reader (ADR 0166) reads beside the packaged heads; a deployment's own heads read
with their own reader or with none. Beside the packaged English reader reads a second, the
multilingual encoder tuned as one (ADR 0173): a sentence is a request when either reads it as
one (`EitherReader`), each at its own gate and threshold.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from factledger.adapters.deferred_load import DeferredLoad
from factledger.adapters.judgement.cross_answers import (
    CLASSES,
    CrossAnswerJudge,
    CrossEncoderIntegrityError,
    metadata_of,
)
from factledger.adapters.judgement.tuned_answers_file import TunedAnswersIntegrityError
from factledger.adapters.judgement.tuned_use import TunedUseAnswerJudge
from factledger.adapters.pinned_files import read_pinned
from factledger.application.judgement.types import Reply

QUESTION = "request to forget"  # the pair's first segment, as the reader was trained

# ADR 0165's candidate two, adopted by ADR 0166: fitted beside the packaged heads' forget flag
# (`judge.PACKAGED_HEADS`), on the project's sentences and writers T1's and T2's lines. Its
# threshold and gate are the ones its metadata carries, pinned here so that a start reads
# neither the file nor its metadata (the file loads after ready, `DeferredLoad`).
PACKAGED_FORGET_READER = Path(__file__).parent / "weights" / "forget-reader-int8.onnx"
PACKAGED_FORGET_READER_SHA256 = "5e1420957527e3eb7118b16194442149272aa94a38aa070525ee9f27e6d075b8"
PACKAGED_FORGET_READER_MIN = 0.349
PACKAGED_FORGET_READER_GATE = 0.4


# ADR 0173: the packaged multilingual encoder tuned as a reader of requests to forget, for the
# sentences the English reader cannot read (other languages, lines that mix them); fitted on
# the same lines and writer T3's. Its threshold and gate are the file's, pinned here likewise.
PACKAGED_MULTILINGUAL_READER = Path(__file__).parent / "weights" / "forget-reader-use.npz"
PACKAGED_MULTILINGUAL_READER_SHA256 = (
    "db4874f75c06c028e3698ce976f8cf3e7983000882dafec9e3e99c1961e9346d"
)
PACKAGED_MULTILINGUAL_READER_MIN = 0.6241523623466492
PACKAGED_MULTILINGUAL_READER_GATE = 0.4


class ForgetReaderIntegrityError(RuntimeError):
    """The reader's file is missing, differs from its pin, or does not carry its gate."""


class PairModel(Protocol):
    """A reader of (question, sentence) pairs in the answer classes' order (`CLASSES`)."""

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]: ...


class LoadedLater:
    """A pair model loaded on a thread of its own once the process is ready (or by its first
    reading, which waits for it and gets its error)."""

    def __init__(self, load: Callable[[], PairModel]) -> None:
        self._loading: DeferredLoad[PairModel] = DeferredLoad.pending(load, name="forget_reader")

    def probabilities_sync(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        return self._loading.result().probabilities_sync(pairs)


class RequestReader(Protocol):
    """Reads which sentences ask to forget, given the forget flag's probability of each."""

    async def requests(self, sentences: Sequence[str], flag_p: Sequence[float]) -> list[bool]: ...


# The shipped multilingual reader, once per process and file: every reader built in it
# shares one (a process that builds many, as the tests do, would otherwise load a copy for
# each, on as many threads at once).
_MULTILINGUAL: dict[tuple[Path, str], PairModel] = {}
_MULTILINGUAL_LOCK = threading.Lock()


def _packaged_multilingual_model() -> PairModel:
    """The shipped multilingual reader, its encoder built and run once: the load happens on
    its own thread after ready, so the first sentence read does not pay for it. A load that
    fails leaves nothing behind: the next one tries again."""
    key = (PACKAGED_MULTILINGUAL_READER, PACKAGED_MULTILINGUAL_READER_SHA256)
    with _MULTILINGUAL_LOCK:
        if key not in _MULTILINGUAL:
            try:
                model = TunedUseAnswerJudge.load(*key)
                model.probabilities_sync([(QUESTION, "warm up")])
            except TunedAnswersIntegrityError as exc:
                raise ForgetReaderIntegrityError(str(exc)) from exc
            _MULTILINGUAL[key] = model
        return _MULTILINGUAL[key]


def _packaged_model() -> PairModel:
    """The shipped file, its bytes checked against the pin; its threshold and gate are the
    pinned constants (a test reads them against the file's metadata, so no start parses it)."""
    raw = read_pinned(
        PACKAGED_FORGET_READER,
        PACKAGED_FORGET_READER_SHA256,
        ForgetReaderIntegrityError,
        "forget reader file",
    )
    return CrossAnswerJudge(
        raw, PACKAGED_FORGET_READER_MIN, f"cross:{PACKAGED_FORGET_READER_SHA256[:12]}"
    )


@dataclass(frozen=True, slots=True)
class ForgetReader:
    """The reader (`model`), its threshold (`reader_min`) and the flag's gate."""

    model: PairModel
    reader_min: float
    gate: float

    @classmethod
    def packaged(cls) -> ForgetReader:
        """The shipped reader at its pinned threshold and gate, loaded after ready."""
        return cls(
            LoadedLater(_packaged_model), PACKAGED_FORGET_READER_MIN, PACKAGED_FORGET_READER_GATE
        )

    @classmethod
    def packaged_multilingual(cls) -> ForgetReader:
        """The shipped multilingual reader (ADR 0173) at its pinned threshold and gate,
        loaded after ready."""
        return cls(
            LoadedLater(_packaged_multilingual_model),
            PACKAGED_MULTILINGUAL_READER_MIN,
            PACKAGED_MULTILINGUAL_READER_GATE,
        )

    @classmethod
    def load(cls, path: Path, sha256: str | None) -> ForgetReader:
        """An int8 ONNX cross-encoder (`.onnx`, its threshold and gate in its metadata) or the
        multilingual encoder tuned as one (`.npz`, both in the file), checked against
        `sha256`."""
        try:
            if path.suffix == ".npz":
                tuned = TunedUseAnswerJudge.load(path, sha256)
                gate = tuned.tuned.gate
                if gate is None:
                    raise ForgetReaderIntegrityError(f"{path.name} does not carry its gate")
                return cls(tuned, tuned.tuned.yes_min, gate)
            model = CrossAnswerJudge.load(path, sha256)
        except (CrossEncoderIntegrityError, TunedAnswersIntegrityError) as exc:
            raise ForgetReaderIntegrityError(str(exc)) from exc
        card = json.loads(metadata_of(model.model).get("trained", "{}"))
        if not isinstance(card.get("gate"), int | float):
            raise ForgetReaderIntegrityError(f"{path.name} does not carry its gate")
        return cls(model, model.yes_min, float(card["gate"]))

    def probabilities_sync(self, sentences: Sequence[str]) -> list[float]:
        """Each sentence's probability of asking to forget, read alone."""
        yes = CLASSES.index(Reply.YES.value)
        return [float(self.model.probabilities_sync([(QUESTION, s)])[0][yes]) for s in sentences]

    async def requests(self, sentences: Sequence[str], flag_p: Sequence[float]) -> list[bool]:
        """Which sentences ask to forget, given the flag's probability of each."""
        gated = [i for i, p in enumerate(flag_p) if p >= self.gate]
        out = [False] * len(sentences)
        if not gated:
            return out
        read = await asyncio.to_thread(self.probabilities_sync, [sentences[i] for i in gated])
        for i, p in zip(gated, read, strict=True):
            out[i] = p >= self.reader_min
        return out


@dataclass(frozen=True, slots=True)
class EitherReader:
    """Readers side by side (ADR 0173): a sentence is a request when any of them reads it as
    one, each at its own gate and threshold; a later reader reads only the sentences the
    earlier ones did not take."""

    readers: tuple[RequestReader, ...]

    @classmethod
    def packaged(cls) -> EitherReader:
        """The shipped English reader, then the shipped multilingual one."""
        return cls((ForgetReader.packaged(), ForgetReader.packaged_multilingual()))

    async def requests(self, sentences: Sequence[str], flag_p: Sequence[float]) -> list[bool]:
        taken = [False] * len(sentences)
        for reader in self.readers:
            left = [-1.0 if t else p for t, p in zip(taken, flag_p, strict=True)]
            read = await reader.requests(sentences, left)
            taken = [t or r for t, r in zip(taken, read, strict=True)]
        return taken
