"""The subject aggregate (`Subject`) and its deterministic id (`subject_id_for`)."""

from factledger.domain.subject.aggregate import Subject
from factledger.domain.subject.ids import (
    MAX_REFERENCE,
    SUBJECT_NAMESPACE,
    returning_subject_id,
    subject_id_for,
)
from factledger.domain.subject.state import SEEN_COMMANDS_WINDOW

__all__ = [
    "MAX_REFERENCE",
    "SEEN_COMMANDS_WINDOW",
    "SUBJECT_NAMESPACE",
    "Subject",
    "returning_subject_id",
    "subject_id_for",
]
