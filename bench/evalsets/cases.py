"""The blind sets' files, parsed: multi-session cases (`cases-*.yaml`) and confirmation
replies (`answers-*.yaml`). The format is the one the writers were given (`FORMAT.md`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

# The domains, their subject kinds and profile fields, exactly as the writers were given them.
LIST_FIELDS = frozenset(
    {
        "competitors",
        "complaints",
        "allergies",
        "medications",
        "skills",
        "must_haves",
        "deal_breakers",
    }
)
DOMAINS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "sales": (
        "lead",
        (
            "name",
            "employer",
            "job_title",
            "supplier",
            "budget",
            "team_size",
            "contact_channel",
            "purchase_intent",
            "timeline",
            "decision_maker",
            "competitors",
            "complaints",
        ),
    ),
    "support": (
        "customer",
        (
            "name",
            "employer",
            "job_title",
            "plan",
            "product_version",
            "operating_system",
            "issue",
            "contact_channel",
            "preferred_language",
            "complaints",
        ),
    ),
    "insurance": (
        "policyholder",
        (
            "name",
            "policy_type",
            "vehicle",
            "home_address",
            "coverage_level",
            "deductible",
            "payment_method",
            "beneficiary",
            "claim_status",
            "contact_channel",
        ),
    ),
    "patient_intake": (
        "patient",
        (
            "name",
            "date_of_birth",
            "allergies",
            "medications",
            "insurer",
            "primary_physician",
            "chief_complaint",
            "diet",
            "emergency_contact",
            "preferred_pharmacy",
            "smoking_status",
        ),
    ),
    "recruiting": (
        "candidate",
        (
            "name",
            "current_employer",
            "job_title",
            "years_experience",
            "salary_expectation",
            "notice_period",
            "location",
            "willing_to_relocate",
            "desired_role",
            "work_authorization",
            "earliest_start_date",
            "skills",
        ),
    ),
    "real_estate": (
        "home_buyer",
        (
            "name",
            "budget",
            "preferred_area",
            "bedrooms",
            "mortgage_status",
            "move_by_date",
            "current_housing",
            "household_size",
            "must_haves",
            "deal_breakers",
        ),
    ),
}


def bare_schemas() -> dict[str, dict[str, str]]:
    """Each kind's fields as bare types, the way a deployment configures a new kind."""
    return {
        kind: {f: "list" if f in LIST_FIELDS else "text" for f in fields}
        for kind, fields in DOMAINS.values()
    }


# How a reviewer maps each domain's own fields onto the fields the product proposes for a
# kind nobody configured (`application.proposals.schema.ANY_KIND`); the other fields have no
# counterpart there. The lead and customer kinds keep their built-in fields.
ANY_KIND_FIELDS: Mapping[str, str] = {
    "name": "name",
    "employer": "employer",
    "current_employer": "employer",
    "job_title": "job_title",
    "location": "location",
    "home_address": "location",
    "contact_channel": "contact_preference",
    "date_of_birth": "key_dates",
    "move_by_date": "key_dates",
    "earliest_start_date": "key_dates",
    "budget": "amounts",
    "salary_expectation": "amounts",
    "deductible": "amounts",
}


def named_schemas() -> dict[str, dict[str, dict[str, object]]]:
    """Each kind's fields with the extractor slot of the same name feeding each."""
    return {
        kind: {f: {"type": t, "slots": [f]} for f, t in fields.items()}
        for kind, fields in bare_schemas().items()
    }


@dataclass(frozen=True, slots=True)
class Expected:
    field: str
    keywords: tuple[str, ...]
    origin: str
    updates: str | None
    correction: bool
    hedged: bool
    condition: str | None
    value: str = ""  # as the writer wrote it; the scorer reads the keywords


@dataclass(frozen=True, slots=True)
class NotProposed:
    keywords: tuple[str, ...]
    field: str | None
    why: str


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    field: str | None
    keywords: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answer: tuple[str, ...]
    stale: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Session:
    at: datetime
    channel: str
    lines: tuple[tuple[str, str], ...]  # (role, text)
    proposals: tuple[Expected, ...]
    not_proposed: tuple[NotProposed, ...]
    forgets: tuple[ForgetRequest, ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True, slots=True)
class Review:
    after_session: int
    field: str
    approve: bool


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    writer: str  # ids are unique per writer; the subject is named by both
    domain: str
    kind: str
    tags: tuple[str, ...]
    sessions: tuple[Session, ...]
    reviews: tuple[Review, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    id: str
    domain: str
    field: str
    value: str
    question: str
    reply: str
    label: str  # yes | no | neither


def _words(raw: Any) -> tuple[str, ...]:
    return tuple(str(k) for k in (raw or ()) if str(k).strip())


def _session(raw: Mapping[str, Any]) -> Session:
    expect = raw.get("expect") or {}
    return Session(
        at=datetime.fromisoformat(str(raw["at"]).replace("Z", "+00:00")),
        channel=str(raw.get("channel", "chat")),
        lines=tuple((str(line["role"]), str(line["text"])) for line in raw["lines"]),
        proposals=tuple(
            Expected(
                field=str(p["field"]),
                keywords=_words(p.get("keywords")),
                origin=str(p.get("origin", "stated")),
                updates=None if p.get("updates") is None else str(p["updates"]),
                correction=bool(p.get("correction", False)),
                hedged=bool(p.get("hedged", False)),
                condition=None if p.get("condition") is None else str(p["condition"]),
                value=str(p.get("value", "")),
            )
            for p in expect.get("proposals") or ()
        ),
        not_proposed=tuple(
            NotProposed(_words(n.get("keywords")), n.get("field"), str(n.get("why", "")))
            for n in expect.get("not_proposed") or ()
        ),
        forgets=tuple(
            ForgetRequest(f.get("field"), _words(f.get("keywords")))
            for f in expect.get("forget_requests") or ()
        ),
        questions=tuple(
            Question(
                str(q["text"]), _words(q.get("answer_keywords")), _words(q.get("stale_keywords"))
            )
            for q in raw.get("questions") or ()
        ),
    )


def parse_cases(raw: Sequence[Mapping[str, Any]]) -> list[Case]:
    return [
        Case(
            id=str(c["id"]),
            writer=str(c.get("writer", "")),
            domain=str(c["domain"]),
            kind=str(c.get("kind") or DOMAINS[str(c["domain"])][0]),
            tags=_words(c.get("tags")),
            sessions=tuple(_session(s) for s in c["sessions"]),
            reviews=tuple(
                Review(int(r["after_session"]), str(r["field"]), r["decision"] == "approve")
                for r in c.get("reviews") or ()
            ),
        )
        for c in raw
    ]


def _label(raw: object) -> str:
    """YAML 1.1 reads a bare `yes`/`no` as a boolean."""
    if isinstance(raw, bool):
        return "yes" if raw else "no"
    return str(raw).strip().lower()


def parse_answers(raw: Sequence[Mapping[str, Any]]) -> list[Answer]:
    return [
        Answer(
            id=str(a["id"]),
            domain=str(a["domain"]),
            field=str(a["change"]["field"]),
            value=str(a["change"]["value"]),
            question=str(a["question"]),
            reply=str(a["reply"]),
            label=_label(a["label"]),
        )
        for a in raw
    ]


def _load(path: Path) -> list[Mapping[str, Any]]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    return list(loaded)


def load_cases(directory: Path) -> list[Case]:
    return [c for p in sorted(directory.glob("cases-*.yaml")) for c in parse_cases(_load(p))]


def load_answers(directory: Path) -> list[Answer]:
    return [a for p in sorted(directory.glob("answers-*.yaml")) for a in parse_answers(_load(p))]
