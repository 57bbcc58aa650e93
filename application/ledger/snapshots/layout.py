"""The shape of a subject's state, as one fingerprint: a snapshot written by code whose state
had another shape is not read (the load replays the stream instead).

It covers the aggregate's attributes and the fields of every dataclass and the members of
every enum in the domain package, so adding, renaming or retyping any of them changes it
without anyone having to remember a version number.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import inspect
import pkgutil
from datetime import UTC, datetime
from functools import cache
from importlib import import_module

import factledger.domain
from factledger.domain.subject import Subject, legacy_subject_id

# Raise when the codec itself changes (the sealing format, the pickled container).
CODEC_VERSION = 1
_PROBE_AT = datetime(2000, 1, 1, tzinfo=UTC)


@cache
def state_layout() -> str:
    """A short hex fingerprint of the subject state's shape in this build."""
    parts = [f"codec={CODEC_VERSION}", f"subject={getattr(Subject, 'class_version', 1)}"]
    # A subject fresh from registration holds every attribute its __init__ sets.
    probe = Subject.register(
        "layout",
        "probe",
        "probe",
        at=_PROBE_AT,
        subject_id=legacy_subject_id("layout", "probe", "probe"),
    )
    parts.append("attrs=" + ",".join(sorted(probe.__dict__)))
    parts.extend(_domain_shapes())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@cache
def domain_classes() -> tuple[type[object], ...]:
    """Every class defined in the domain package, in a stable order."""
    found: list[type[object]] = []
    modules = pkgutil.walk_packages(factledger.domain.__path__, "factledger.domain.")
    for info in sorted(modules, key=lambda m: m.name):
        module = import_module(info.name)
        for _, obj in sorted(vars(module).items()):
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                found.append(obj)
    return tuple(found)


def _domain_shapes() -> list[str]:
    shapes: list[str] = []
    for cls in domain_classes():
        name = f"{cls.__module__}.{cls.__qualname__}"
        if dataclasses.is_dataclass(cls):
            fields = ",".join(f"{f.name}:{f.type}" for f in dataclasses.fields(cls))
            shapes.append(f"{name}({fields})")
        elif issubclass(cls, enum.Enum):
            members = ",".join(f"{m.name}={m.value!r}" for m in cls)
            shapes.append(f"{name}[{members}]")
    return shapes
