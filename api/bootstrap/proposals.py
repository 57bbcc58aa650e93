"""The proposals part: `Settings` -> the product's model (`SessionProposer`).

- `profile_schemas`: each configured kind's field types, for the ledger's checks;
- `kind_feeds`: which extractor slots feed which fields (configured kinds; else the defaults),
  a money field's own currency and a date field's order of dates in numbers and reading of
  dates said without a year;
- `proposal_modes`: `propose` or `off`, per deployment, tenant and subject kind;
- `model_actor`: who the proposals are by, `model:<extractor>@<version>`.
"""

from __future__ import annotations

from collections.abc import Mapping

from factledger.adapters.extraction.learned.extractor import LearnedExtractor
from factledger.adapters.extraction.learned.sentences import SentenceCandidates
from factledger.adapters.extraction.rules.extractor import RuleExtractor
from factledger.adapters.values.words import WordsValueReader
from factledger.api.bootstrap.judgement import (
    dropped_items_reader,
    placement_mentions,
    placement_reading,
)
from factledger.api.settings import (
    LearnedExtractorSettings,
    OpenAICompatibleExtractorSettings,
    ProfileFieldSettings,
    RuleExtractorSettings,
    Settings,
)
from factledger.application.judgement.ports import SentenceJudge
from factledger.application.ledger.ledger import Ledger
from factledger.application.memory.ports import Extractor
from factledger.application.proposals.modes import ProposalMode, ProposalModes
from factledger.application.proposals.schema import DEFAULT_FEEDS, FieldFeed, KindFeeds
from factledger.application.proposals.typed import YearUnsaid
from factledger.application.review.proposer import SessionProposer
from factledger.domain.provenance import Actor, ActorKind
from factledger.domain.values import ProfileSchema, ValueType


def _field(spec: ValueType | ProfileFieldSettings) -> ProfileFieldSettings:
    return spec if isinstance(spec, ProfileFieldSettings) else ProfileFieldSettings(type=spec)


def profile_schemas(settings: Settings) -> dict[str, ProfileSchema]:
    return {
        kind: ProfileSchema({name: _field(spec).type for name, spec in fields.items()})
        for kind, fields in settings.profile_schemas.items()
    }


def _slots(name: str, spec: ValueType | ProfileFieldSettings) -> tuple[str, ...]:
    """A field given as a bare type is fed by the slot of its own name, so a new kind gets
    proposals without naming slots; one given with `slots` takes those (none: only callers
    propose it)."""
    return (name,) if isinstance(spec, ValueType) else spec.slots


def kind_feeds(settings: Settings) -> dict[str, KindFeeds]:
    """A configured kind is fed as configured; the others keep the built-in feeds."""
    feeds = dict(DEFAULT_FEEDS)
    for kind, fields in settings.profile_schemas.items():
        feeds[kind] = KindFeeds(
            tuple(
                FieldFeed(
                    name,
                    _field(spec).type,
                    slots,
                    _field(spec).currency,
                    _field(spec).date_order,
                    _field(spec).year_unsaid or YearUnsaid.NEXT,
                )
                for name, spec in fields.items()
                if (slots := _slots(name, spec))
            )
        )
    return feeds


def proposal_modes(settings: Settings) -> ProposalModes:
    s = settings.proposals
    return ProposalModes(
        default=ProposalMode(s.mode),
        tenants={t: ProposalMode(o.mode) for t, o in s.tenants.items() if o.mode is not None},
        kinds={
            (tenant, kind): ProposalMode(mode)
            for tenant, o in s.tenants.items()
            for kind, mode in o.kinds.items()
        },
    )


def model_actor(settings: Settings) -> Actor:
    """The model the proposals are by: the extractor and its version (the change ids derive
    from it, so a rerun of the same model proposes the same changes)."""
    match settings.extractor:
        case RuleExtractorSettings():
            return Actor(ActorKind.MODEL, f"rule@{RuleExtractor.VERSION}")
        case LearnedExtractorSettings(candidates="sentences"):
            version = f"{SentenceCandidates.VERSION}.{LearnedExtractor.VERSION}"
            return Actor(ActorKind.MODEL, f"learned-sentences@{version}")
        case LearnedExtractorSettings():
            return Actor(
                ActorKind.MODEL, f"learned@{RuleExtractor.VERSION}.{LearnedExtractor.VERSION}"
            )
        case OpenAICompatibleExtractorSettings(model=model):
            return Actor(ActorKind.MODEL, f"openai-compatible:{model}@1")


def build_proposer(
    settings: Settings,
    ledger: Ledger,
    extractor: Extractor,
    *,
    judge: SentenceJudge | None = None,
) -> SessionProposer:
    feeds: Mapping[str, KindFeeds] = kind_feeds(settings)
    return SessionProposer(
        ledger,
        extractor,
        model_actor(settings),
        feeds=feeds,
        modes=proposal_modes(settings),
        judge=judge,
        replacements_in_requests=settings.proposals.replacements_in_requests,
        forget_said_lines=settings.proposals.forget_said_lines,
        placement_reading=None if judge is None else placement_reading(settings.proposals),
        placement_mentions=(
            None if judge is None else placement_mentions(settings.proposals, settings.extractor)
        ),
        values=WordsValueReader(),
        dropped=dropped_items_reader(settings.proposals),
    )
