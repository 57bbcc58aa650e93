"""The extraction guidance part: `Settings` -> the guidance routes and catalogue.

The catalogue (which conversation types a tenant knows) checks session starts; the extractors
compile the routes' guidance into a `RoutedGuidance` (`backend.build_extractor`).
"""

from __future__ import annotations

from factledger.adapters.extraction.rules.routed_guidance import built_in_routes
from factledger.api.settings import ExtractionSettings, Settings
from factledger.application.memory.guidance_catalogue import GuidanceCatalogue, GuidanceRoute


def guidance_routes(settings: ExtractionSettings) -> tuple[GuidanceRoute, ...]:
    return tuple(
        GuidanceRoute(
            r.guidance,
            tenant=r.tenant,
            subject_kind=r.subject_kind,
            channel=None if r.channel is None else r.channel.value,
            conversation_type=r.conversation_type,
        )
        for r in settings.guidance
    )


def guidance_catalogue(settings: Settings) -> GuidanceCatalogue:
    """The configured routes and the packaged ones they do not replace."""
    return GuidanceCatalogue.merged(built_in_routes(), guidance_routes(settings.extraction))
