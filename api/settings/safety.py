"""What withholds a message before anything of it is kept, beside the detectors."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from factledger.api.settings.base import NestedSettings


class SafetySettings(NestedSettings):
    """The learned reader of secrets (ADR 0185): the shipped head, a deployment's own (`python
    -m factledger.bench.judgement secrets`, fitted over the packaged multilingual encoder)
    pinned by SHA-256, or none (`FACTLEDGER_SAFETY__SECRET_HEAD=false`: the detectors alone,
    which know formats and English credential words only).

    How the instruction screen reads a line: `both`, each piece by the English and the
    multilingual head, their log-odds weighed (ADR 0204); `mean`, the mean of their
    probabilities (ADR 0201); `english`, the English head alone (which reads lines in other
    languages as instructions more often)."""

    secret_head: bool = True
    secret_head_path: Path | None = None
    secret_head_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    instruction_reading: Literal["both", "mean", "english"] = "both"
