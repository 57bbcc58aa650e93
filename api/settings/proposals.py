"""The product's proposals."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from factledger.api.settings.base import NestedSettings
from factledger.application.proposals.typed import DateOrder, YearUnsaid
from factledger.domain.values import ValueType

# -- the product's proposals -------------------------------------------------------------------

ProposalModeName = Literal["propose", "off"]
# An extractor slot: `supplier`, or a family such as `complaint` (which also takes
# `complaint:late_deliveries`).
SlotName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
CurrencyCode = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


class ProfileFieldSettings(NestedSettings):
    """One field of a kind's profile schema: its type (`list` holds several values), the
    extractor slots whose facts the product proposes for it (none: only callers propose) and,
    for a money field, the currency of an amount said without one (none: such an amount is
    not proposed)."""

    type: ValueType
    slots: tuple[SlotName, ...] = ()
    currency: CurrencyCode | None = None
    # A date field's order of dates written in numbers alone: "12/07/1990" is read only
    # when the deployment says whether the day or the month comes first.
    date_order: DateOrder | None = None
    # A date field's day and month said without a year: the next such day ("next"), or no
    # date ("none", for a birthday).
    year_unsaid: YearUnsaid | None = None

    @field_validator("currency")
    @classmethod
    def _currency_for_money_only(cls, currency: str | None, info: ValidationInfo) -> str | None:
        if currency is not None and info.data.get("type") is not ValueType.MONEY:
            raise ValueError("only a money field has a currency")
        return currency

    @field_validator("date_order", "year_unsaid")
    @classmethod
    def _for_dates_only(cls, value: StrEnum | None, info: ValidationInfo) -> StrEnum | None:
        if value is not None and info.data.get("type") is not ValueType.DATE:
            raise ValueError(f"only a date field has a {info.field_name}")
        return value


class TenantProposalSettings(NestedSettings):
    """One tenant's proposal mode (None: the deployment's) and per subject kind overrides."""

    mode: ProposalModeName | None = None
    kinds: dict[str, ProposalModeName] = Field(default_factory=dict)


class ProposalSettings(NestedSettings):
    """Whether the product reads every recorded session and proposes changes, e.g.
    `FACTLEDGER_PROPOSALS__TENANTS='{"acme": {"kinds": {"patient": "off"}}}'`."""

    mode: ProposalModeName = "propose"
    tenants: dict[str, TenantProposalSettings] = Field(default_factory=dict)
    # A request to forget said in conversation is read once more for the value that replaces
    # a held single-valued field ("remove my number, email me instead"), which is proposed
    # quoting only that value (ADR 0151).
    replacements_in_requests: bool = False
    # A request to forget that concerns no field names the subject's earlier line closest to
    # it, a pending `forget_said` change (ADR 0174; on by ADR 0175). Off: such a request
    # proposes nothing, its sentence is still kept out of memories.
    forget_said_lines: bool = True
    # How a request to forget is placed on the field it concerns: by the mean closeness the
    # judgement heads' encoder and the packaged multilingual encoder read (`both`, ADR 0200),
    # or by the heads' encoder alone (`heads`, as before).
    forget_placement: Literal["both", "heads"] = "both"
    # A request placed on a field by closeness alone is placed only where the learned
    # extractor's QA reader reads it speaking of that field (ADR 0218; its bar is the
    # extractor's `qa_reader_mention_floor`, the packaged file's own unless set; a request
    # it does not speak of names the line it concerns instead). Off, with another extractor,
    # or with a deployment's reader file given no bar: closeness alone.
    forget_placement_mentions: bool = True
    # The model proposes to take off a list field the items a subject sentence says no longer
    # hold ("the cardiologist stopped the aspirin"), read by a deployment's own dropped-items
    # model, pinned by SHA-256 (`python -m factledger.bench.judgement.dropped fit`; none
    # ships: ADR 0159).
    dropped_items: bool = False
    dropped_items_model_path: Path | None = None
    dropped_items_model_sha256: str | None = None

    @model_validator(mode="after")
    def _dropped_items_need_a_model(self) -> ProposalSettings:
        if self.dropped_items and self.dropped_items_model_path is None:
            raise ValueError(
                "dropped_items: needs dropped_items_model_path (no dropped-items model ships, "
                "ADR 0159: train one with `python -m factledger.bench.judgement.dropped fit`)"
            )
        if not self.dropped_items and self.dropped_items_model_path is not None:
            # The model would be read by nothing: removals stay off unless asked for.
            raise ValueError("dropped_items_model_path: set only with dropped_items true")
        return self
