"""Which extracted facts feed which profile fields, per subject kind.

A field names the extractor slots that feed it: `supplier` takes facts of slot `supplier`;
`complaint` takes `complaint` and every keyed variant (`complaint:late_deliveries`). A list
field gathers values (an extension adds to it); any other field holds one value (an update
replaces it). Facts whose slot feeds no field stay backend memories only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from factledger.application.proposals.typed import DateOrder, ReadingHints, YearUnsaid
from factledger.domain.values import ProfileSchema, ValueType


@dataclass(frozen=True, slots=True)
class FieldFeed:
    """One profile field and the extractor slots that feed it."""

    field: str
    type: ValueType
    slots: tuple[str, ...]
    # A money field's currency, for an amount whose words name none.
    currency: str | None = None
    # A date field's order of a date written in numbers ("12/07/1990"); None: unsettled.
    date_order: DateOrder | None = None
    # A date field's reading of a day and month said without a year.
    year_unsaid: YearUnsaid = YearUnsaid.NEXT

    @property
    def hints(self) -> ReadingHints:
        return ReadingHints(self.currency, self.date_order, self.year_unsaid)

    @property
    def many(self) -> bool:
        return self.type is ValueType.LIST

    def takes(self, slot: str) -> bool:
        return any(is_slot_of(slot, s) for s in self.slots)


def is_slot_of(slot: str, base: str) -> bool:
    """`slot` is `base` or a keyed variant of it (`complaint:late_deliveries` of `complaint`)."""
    return slot == base or slot.startswith(f"{base}:")


@dataclass(frozen=True, slots=True)
class KindFeeds:
    """The fed fields of one subject kind, in the order a slot is matched against them."""

    fields: tuple[FieldFeed, ...] = ()

    def field_for(self, slot: str | None) -> FieldFeed | None:
        if slot is None:
            return None
        return next((f for f in self.fields if f.takes(slot)), None)

    def profile_schema(self) -> ProfileSchema:
        return ProfileSchema({f.field: f.type for f in self.fields})


def _text(field: str, *slots: str) -> FieldFeed:
    return FieldFeed(field, ValueType.TEXT, slots or (field,))


# The lead kind the demo and most sales deployments use. `location` is left out: its
# patterns also match "moved to <a supplier>", and a wrong field is worse than none.
# `timeline`, `decision_maker` and `competitors` are fed only by the `sales_discovery`
# guidance: a lead's sessions of that type qualify the deal. Support slots
# (`issue`, `severity`, `environment`, `requested_outcome`, `product`) feed no built-in kind;
# a deployment maps them for its support kind in `FACTLEDGER_PROFILE_SCHEMAS`.
DEFAULT_LEAD = KindFeeds(
    (
        _text("name"),
        _text("employer"),
        _text("job_title"),
        _text("supplier"),
        _text("budget"),
        _text("plan"),
        _text("team_size"),
        _text("contact_channel"),
        _text("purchase_intent", "intent"),
        FieldFeed("complaints", ValueType.LIST, ("complaint",)),
        FieldFeed("insights", ValueType.LIST, ("insight",)),
        _text("timeline"),
        _text("decision_maker"),
        FieldFeed("competitors", ValueType.LIST, ("competitor",)),
    )
)
# A customer already buys: what they are on, how to reach them, what goes wrong and what they
# may buy next. Who supplies them, their budget and headcount are a lead's questions, and a
# field nobody reads is one more thing a reviewer must approve.
DEFAULT_CUSTOMER = KindFeeds(
    (
        _text("name"),
        _text("employer"),
        _text("job_title"),
        _text("plan"),
        _text("contact_channel"),
        _text("purchase_intent", "intent"),
        FieldFeed("complaints", ValueType.LIST, ("complaint",)),
        FieldFeed("insights", ValueType.LIST, ("insight",)),
    )
)
DEFAULT_FEEDS: Mapping[str, KindFeeds] = {"lead": DEFAULT_LEAD, "customer": DEFAULT_CUSTOMER}
# Any other kind nobody configured (a patient, a candidate, a case): the facts people expect
# of anyone, under names a reviewer maps onto the kind's own fields once it has a schema.
# Nothing is silently never proposed: without these a new kind got no proposal at all.
ANY_KIND = KindFeeds(
    (
        _text("name"),
        _text("employer"),
        _text("job_title"),
        _text("location"),
        _text("contact_preference", "contact_channel"),
        FieldFeed("key_dates", ValueType.LIST, ("key_date",)),
        FieldFeed("amounts", ValueType.LIST, ("amount",)),
    )
)


def feeds_of(feeds: Mapping[str, KindFeeds], kind: str) -> KindFeeds:
    """A kind's fed fields: as configured or built in, else those of any kind."""
    return feeds.get(kind, ANY_KIND)
