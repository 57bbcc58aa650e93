"""Deterministic names in the memory backend, shared by the sync worker (writer) and recall.

Session ids are caller-supplied (up to 200 free characters), so they are hashed into ids the
memory port accepts; the original id travels in the metadata.
"""

from __future__ import annotations

from uuid import NAMESPACE_URL, UUID, uuid5

from factledger.application.memory.types import Namespace, namespace

_IDS = uuid5(NAMESPACE_URL, "factledger:backend-ids")

KIND_SESSION_SUMMARY = "session_summary"
KIND_CHANGE_PROPOSED = "change_proposed"
KIND_PROFILE_VERSION = "profile_version"


def namespace_for(subject_id: UUID) -> Namespace:
    """One backend namespace per subject (isolation is structural)."""
    return namespace(f"subject-{subject_id.hex}")


def session_key(subject_id: UUID, session_id: str) -> str:
    return uuid5(_IDS, f"{subject_id}/{session_id}").hex


def transcript_document_id(subject_id: UUID, session_id: str) -> str:
    """The document id of a session's transcript: a replay re-ingests nothing."""
    return f"session.{session_key(subject_id, session_id)}"


def summary_record_id(subject_id: UUID, session_id: str) -> str:
    return f"summary.{session_key(subject_id, session_id)}"


def proposal_record_id(change_id: UUID) -> str:
    return f"proposal.{change_id.hex}"


def profile_record_id(version: int) -> str:
    return f"profile.v{version}"
