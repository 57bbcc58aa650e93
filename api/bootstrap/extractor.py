"""Building the configured `Extractor` (`settings.extractor`) for the composition root and CLIs."""

from __future__ import annotations

import httpx

from factledger.adapters.extraction.openai.extractor import (
    OpenAICompatibleExtractor,
    load_instructions,
)
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.api.settings import (
    ExtractorSettings,
    OpenAICompatibleExtractorSettings,
    RuleExtractorSettings,
)
from factledger.application.ports import Extractor


def build_extractor(settings: ExtractorSettings, http: httpx.AsyncClient) -> Extractor:
    """The extractor the settings choose; `http` is only used by the LLM one (the caller owns
    and closes it)."""
    match settings:
        case RuleExtractorSettings():
            return RuleExtractor.from_guidance_file(settings.guidance_path)
        case OpenAICompatibleExtractorSettings():
            key = settings.api_key.get_secret_value() if settings.api_key else None
            return OpenAICompatibleExtractor(
                http,
                base_url=settings.base_url,
                model=settings.model,
                instructions=load_instructions(settings.guidance_path, settings.prompt_path),
                api_key=key,
                timeout_s=settings.timeout_s,
                temperature=settings.temperature,
                response_format=settings.response_format,
            )
