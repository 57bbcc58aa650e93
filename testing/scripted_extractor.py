"""A deterministic `Extractor` for the memory contract suite: a fixed script per transcript.

The contract must test backend semantics (graph, forgetting, isolation), not extraction
quality, so the facts a transcript yields are written by the test itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from factledger.application.memory.extraction import ExtractedFact, ExtractionRequest, KnownFact
from factledger.application.memory.types import RelationKind
from factledger.domain.transcript import Message, Role

# A `related_to` entry "slot:<name>" names the namespace's current fact of that slot, whose
# memory id a test cannot know in advance (each backend derives its own ids).
SLOT_REFERENCE = "slot:"


class UnscriptedTranscriptError(LookupError):
    """The extractor was given a transcript no test scripted (the ingest then fails)."""


class ScriptedExtractor:
    """Maps a transcript (its message texts joined by newlines) to the facts scripted for it.

    - `script(text, *facts)` registers the facts and returns a one-message subject transcript.
    - An unscripted transcript raises `UnscriptedTranscriptError`, so a typo fails loudly and
      tests can drive an ingest into the `failed` state on purpose.
    - `requests` keeps every request seen, so tests can check what the backend passed in.
    """

    def __init__(self) -> None:
        self._scripts: dict[str, tuple[ExtractedFact, ...]] = {}
        self.requests: list[ExtractionRequest] = []

    def script(self, text: str, *facts: ExtractedFact) -> list[Message]:
        self._scripts[text] = tuple(facts)
        return [Message(role=Role.SUBJECT, text=text)]

    def script_transcript(self, transcript: Sequence[Message], *facts: ExtractedFact) -> None:
        self._scripts[transcript_key(transcript)] = tuple(facts)

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        self.requests.append(request)
        key = transcript_key(request.transcript)
        if key not in self._scripts:
            raise UnscriptedTranscriptError("transcript has no script")
        return [_resolve(fact, request.known) for fact in self._scripts[key]]


def transcript_key(transcript: Sequence[Message]) -> str:
    return "\n".join(message.text for message in transcript)


def _resolve(fact: ExtractedFact, known: Sequence[KnownFact]) -> ExtractedFact:
    if not any(ref.startswith(SLOT_REFERENCE) for ref in fact.related_to):
        return fact
    return replace(fact, related_to=tuple(_resolve_ref(ref, known) for ref in fact.related_to))


def _resolve_ref(ref: str, known: Sequence[KnownFact]) -> str:
    if not ref.startswith(SLOT_REFERENCE):
        return ref
    slot = ref.removeprefix(SLOT_REFERENCE)
    for fact in known:
        if fact.slot == slot:
            return fact.memory_id
    raise UnscriptedTranscriptError(f"no known fact in slot {slot}")


def stated(
    key: str,
    text: str,
    *,
    slot: str | None = None,
    updates: bool = False,
    condition: str | None = None,
    source_indexes: tuple[int, ...] = (0,),
) -> ExtractedFact:
    """A fact the subject stated; `updates=True` supersedes the current fact of `slot`."""
    return ExtractedFact(
        key=key,
        text=text,
        slot=slot,
        source_indexes=source_indexes,
        relation=RelationKind.UPDATES if updates else None,
        condition=condition,
    )


def extending(key: str, text: str, *targets: str, slot: str | None = None) -> ExtractedFact:
    """A fact adding context to `targets` (local keys, memory ids or "slot:<name>")."""
    return ExtractedFact(
        key=key,
        text=text,
        slot=slot,
        source_indexes=(0,),
        relation=RelationKind.EXTENDS,
        related_to=targets,
    )


def deriving(key: str, text: str, *targets: str) -> ExtractedFact:
    """A conclusion nobody stated, drawn from `targets`; always an inference."""
    return ExtractedFact(
        key=key,
        text=text,
        slot=None,
        source_indexes=(0,),
        relation=RelationKind.DERIVES,
        related_to=targets,
        is_inference=True,
    )
