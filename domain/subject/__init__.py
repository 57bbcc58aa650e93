"""The subject aggregate (`Subject`) and its deterministic ids (`keyed_subject_id`, and
`legacy_subject_id` for subjects registered before keyed ids)."""

from factledger.domain.subject.aggregate import Subject
from factledger.domain.subject.ids import (
    MAX_REFERENCE,
    SUBJECT_NAMESPACE,
    is_keyed,
    keyed_subject_id,
    legacy_subject_id,
)
from factledger.domain.subject.state import SEEN_COMMANDS_WINDOW

__all__ = [
    "MAX_REFERENCE",
    "SEEN_COMMANDS_WINDOW",
    "SUBJECT_NAMESPACE",
    "Subject",
    "is_keyed",
    "keyed_subject_id",
    "legacy_subject_id",
]
