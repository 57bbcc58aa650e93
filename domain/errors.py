"""Named errors for every rule of the subject ledger. Messages name ids and fields only."""

from __future__ import annotations


class DomainError(Exception):
    """Base class of every broken business rule (HTTP 409 or 422)."""


class InvalidValueError(DomainError):
    """A value is malformed for its type (bad currency, empty text, non-finite number...)."""


class ReasonRestatesError(InvalidValueError):
    """A forget's or an erasure's reason says again the words it forgets; names `reason`,
    never the words."""

    field = "reason"


class InvalidFieldNameError(DomainError):
    """A profile field name is not a lower-case identifier."""


class UnknownFieldError(DomainError):
    """The subject kind has a profile schema and it does not declare this field."""


class ValueTypeMismatchError(DomainError):
    """The value's type is not the one the profile schema declares for the field."""


class InvalidOperationError(DomainError):
    """The operation and the value do not fit (set without a value, append to a non-list,
    remove from one...)."""


class InvalidReferenceError(DomainError):
    """A tenant, subject kind or external reference is empty or malformed."""


class SessionConflictError(DomainError):
    """A session id is reused with other content: another transcript, other proposals, or
    another subject or channel while it is open. A session id names one session."""


class InvalidSessionError(DomainError):
    """A session is malformed (ends before it starts, negative withheld count...)."""


class SessionFullError(InvalidSessionError):
    """An active session already holds the most messages a recorded session may have, so one
    more would make it impossible to end; the session stays open and endable."""


class EvidenceNotFoundError(DomainError):
    """Evidence names a session that was never recorded, or a message or quote it does not hold."""


class StatedWithoutEvidenceError(DomainError):
    """A change with origin `stated` needs evidence quoting the subject's own message."""


class ChangeNotFoundError(DomainError):
    """No change with this id was proposed on this subject."""


class ChangeAlreadyProposedError(DomainError):
    """A change id is reused with a different proposal."""


class ChangeNotPendingError(DomainError):
    """Only pending changes can be confirmed or rejected."""


class ConfirmationNotAllowedError(DomainError):
    """A model or an agent can never confirm (or reject) a change; only the subject or staff."""


class ConfirmationWithoutEvidenceError(DomainError):
    """A confirmation by the subject needs the session and the quote where they confirmed."""


class ConfirmationNotFromSubjectError(DomainError):
    """A subject's confirmation must quote a message the subject wrote, not an agent's line."""


class ConfirmationReusesEvidenceError(DomainError):
    """A subject's confirmation must cite another message than the proposal's own evidence:
    the words a change was drawn from cannot also confirm it."""


class ConfirmationBeforeProposalError(DomainError):
    """A subject's confirmation must cite a message recorded after the change was proposed:
    nobody confirms what had not been asked yet."""


class HedgeDroppedError(DomainError):
    """A `stated` change quotes a tentative sentence (hedged, or resting on a condition:
    "maybe", "if ...") and carries no `condition`."""

    def __init__(self) -> None:
        super().__init__(
            "condition: the quoted sentence is tentative (hedged or conditional); a stated "
            "change quoting it must carry its hedge or condition"
        )
        self.field = "condition"


class StaleChangeError(DomainError):
    """The field changed after the version the change was based on; it must be re-proposed."""


class FieldNotPresentError(DomainError):
    """The field is not in the current profile (nothing to forget or unset)."""


class FieldNotHeldError(FieldNotPresentError):
    """A command names a field of the current profile in its path (an expiry) and the profile
    does not hold it: never confirmed, unset or forgotten."""


class TimeWentBackwardsError(DomainError):
    """An event would be dated before the subject's previous event."""


class SubjectErasedError(DomainError):
    """The subject was erased; it accepts no more commands."""


class ProfileVersionRewriteError(DomainError):
    """A profile version, once written, never changes; a projection found a different copy."""
