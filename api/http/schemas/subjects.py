"""Shapes of the subject endpoints: register, look up, who am I."""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel, Field

from factledger.api.http.schemas.common import SafeText, Strict
from factledger.domain.subject import MAX_REFERENCE

# Kinds the HTTP API accepts: lower-case identifiers, narrower than the domain's references.
KIND_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"
REF_PATTERN = rf"^[^/\s][^/]{{0,{MAX_REFERENCE - 1}}}$"


class RegisterSubjectIn(Strict):
    """A subject is registered under (tenant, kind, external reference); the tenant is yours."""

    kind: str = Field(pattern=KIND_PATTERN, examples=["lead"])
    external_ref: SafeText = Field(pattern=REF_PATTERN, examples=["crm-000417"])
    returning: bool = Field(
        default=False,
        description=(
            "A returning person whose subject under this reference was erased: register a "
            "new subject (new id, empty ledger; nothing of the erased one readable, and its "
            "id not derivable from the reference nor linkable to the erased id without the "
            "deployment's key). Without it an erased reference answers 410. Issue the agent's "
            "token bound to the returned `subject_id`. No effect on a live subject."
        ),
    )


class SubjectOut(BaseModel):
    subject_id: UUID = Field(examples=["3f2c1a4e-9b7d-5e21-8a0c-6d1f2b3c4d5e"])
    kind: str = Field(examples=["lead"])
    external_ref: str = Field(examples=["crm-000417"])
    profile_version: int = Field(examples=[3])
    created: bool | None = Field(
        default=None, description="On register: False when it already existed."
    )


class WhoAmIOut(BaseModel):
    principal_id: str = Field(examples=["agent-7"])
    tenant: str = Field(examples=["acme"])
    role: str = Field(examples=["agent"])
    subject_id: UUID | None = Field(default=None, description="Agent tokens only.")
