"""`OpenAICompatibleExtractor`: facts from any OpenAI-compatible `/chat/completions` endpoint.

- Works with OpenAI, Ollama, vLLM and the llama.cpp server: one POST with a JSON-schema
  `response_format` (or `json_object` for servers without structured outputs).
- The product's instructions come from configuration: the guidance file's `llm_instructions`
  or a prompt file.
- The answer is validated by pydantic and passed through the same guards as every extractor
  (`openai_schema.to_extracted`); malformed output raises `ExtractorOutputError`.
- Transport failures become the memory port's errors; messages and logs carry status codes,
  counts and durations, never the transcript, the prompt or the model's answer.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import httpx
import structlog
from pydantic import ValidationError

from factledger.adapters.extraction.openai.schema import FACTS_JSON_SCHEMA, LlmFacts, to_extracted
from factledger.adapters.extraction.rules.guidance import load_guidance
from factledger.adapters.extraction.rules.routed_guidance import RoutedGuidance
from factledger.application.errors import (
    MemoryBackendError,
    MemoryTimeoutError,
    MemoryUnavailableError,
)
from factledger.application.memory.extraction import (
    ExtractedFact,
    ExtractionContext,
    ExtractionRequest,
)
from factledger.application.memory.guidance_catalogue import DEFAULT_GUIDANCE

log = structlog.get_logger()

ResponseFormat = Literal["json_schema", "json_object"]


class ExtractorOutputError(MemoryBackendError):
    """The model answered, but not with facts in the required shape (the message says why,
    never what it said)."""


def load_instructions(guidance_path: Path | None = None, prompt_path: Path | None = None) -> str:
    """The product's extraction instructions: a prompt file, else the guidance's
    `llm_instructions` (the packaged guidance when no path is given)."""
    if prompt_path is not None:
        return prompt_path.read_text(encoding="utf-8")
    return load_guidance(guidance_path).llm_instructions


def instructions_by_context(
    routes: RoutedGuidance, prompt_path: Path | None = None
) -> Callable[[ExtractionContext], str]:
    """The instructions of the guidance a context is routed to; a prompt file replaces the
    default guidance's only (each routed guidance keeps its own)."""
    prompt = None if prompt_path is None else prompt_path.read_text(encoding="utf-8")

    def choose(context: ExtractionContext) -> str:
        name = routes.name_for(context)
        if prompt is not None and name == DEFAULT_GUIDANCE:
            return prompt
        return routes.guidances[name].llm_instructions

    return choose


class OpenAICompatibleExtractor:
    """Extractor backed by an OpenAI-compatible chat model."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str,
        model: str,
        instructions: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        temperature: float = 0.0,
        response_format: ResponseFormat = "json_schema",
        instructions_for: Callable[[ExtractionContext], str] | None = None,
    ) -> None:
        """`instructions_for`, when given, chooses the instructions per request's context
        (the guidance the catalogue routes it to); else `instructions` serve every request."""
        self._http = http
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._instructions = instructions
        self._headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout_s = timeout_s
        self._temperature = temperature
        self._response_format = response_format
        self._instructions_for = instructions_for

    async def extract(self, request: ExtractionRequest) -> list[ExtractedFact]:
        if not request.transcript:
            return []
        started = time.perf_counter()
        try:
            content = await self._complete(request)
            facts, dropped = to_extracted(_validate(content), request)
        except MemoryBackendError as exc:
            log.warning(
                "extraction.failed",
                extractor="openai",
                error_type=type(exc).__name__,
                duration_ms=_since(started),
            )
            raise
        log.info(
            "extraction.completed",
            extractor="openai",
            messages=len(request.transcript),
            facts=len(facts),
            dropped=dropped,
            duration_ms=_since(started),
        )
        return facts

    async def _complete(self, request: ExtractionRequest) -> str:
        try:
            async with asyncio.timeout(self._timeout_s):
                response = await self._http.post(
                    self._url,
                    json=self._body(request),
                    headers=self._headers,
                    timeout=self._timeout_s,
                )
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise MemoryTimeoutError(f"extractor: no answer within {self._timeout_s} s") from exc
        except httpx.HTTPError as exc:
            raise MemoryUnavailableError(
                f"extractor: request failed ({type(exc).__name__})"
            ) from exc
        if response.status_code != httpx.codes.OK:
            raise MemoryUnavailableError(f"extractor: endpoint answered {response.status_code}")
        return _content(response)

    def _body(self, request: ExtractionRequest) -> dict[str, Any]:
        if self._response_format == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": "facts", "strict": True, "schema": FACTS_JSON_SCHEMA},
            }
        else:
            response_format = {"type": "json_object"}
        instructions = (
            self._instructions
            if self._instructions_for is None
            else self._instructions_for(request.context)
        )
        return {
            "model": self._model,
            "temperature": self._temperature,
            "response_format": response_format,
            "messages": [
                {"role": "system", "content": instructions + _SCHEMA_HINT},
                {"role": "user", "content": json.dumps(_transcript_payload(request))},
            ],
        }


_SCHEMA_HINT = (
    "\nAnswer with one JSON object and nothing else, of this JSON schema:\n"
    + json.dumps(FACTS_JSON_SCHEMA)
)


def _transcript_payload(request: ExtractionRequest) -> dict[str, Any]:
    return {
        "interaction_date": request.occurred_at.isoformat(),
        "messages": [
            {
                "index": i,
                "role": m.role.value,
                "text": m.text,
                "at": m.at.isoformat() if m.at else None,
            }
            for i, m in enumerate(request.transcript)
        ],
        "known_facts": [{"id": k.memory_id, "text": k.text, "slot": k.slot} for k in request.known],
    }


def _content(response: httpx.Response) -> str:
    try:
        choice = response.json()["choices"][0]
        message = choice["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ExtractorOutputError("extractor: the response has no choices[0].message") from exc
    if message.get("refusal"):
        raise ExtractorOutputError("extractor: the model refused to answer")
    if choice.get("finish_reason") == "length":
        raise ExtractorOutputError("extractor: the answer was cut off at the token limit")
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ExtractorOutputError("extractor: the answer is empty")
    return content


def _validate(content: str) -> LlmFacts:
    text = content.strip()
    if text.startswith("```"):  # some local servers wrap JSON in a code fence despite the schema
        text = text.strip("`").removeprefix("json").strip()
    try:
        return LlmFacts.model_validate_json(text)
    except ValidationError as exc:
        # pydantic's message quotes the input; keep it as the cause, report only the count
        raise ExtractorOutputError(
            f"extractor: the answer does not match the facts schema ({exc.error_count()} errors)"
        ) from exc


def _since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
