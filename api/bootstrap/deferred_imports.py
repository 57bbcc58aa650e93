"""Libraries a start to ready does not import, imported on a thread once the process is ready.

Their modules import them where they are first used (the lemmatiser at the first keyword
folded or question phrased, the secret detectors at the first message screened, the vendor
SDK by the arm that chooses that backend), so `/readyz` never waits for them. A served
process then imports them right after it becomes ready, as it loads its models
(`start_deferred_loads`), so that its first requests seldom pay for them: a request that
needs one while the thread imports it waits for that import only (Python's per-module
import lock).
"""

from __future__ import annotations

import importlib
import threading

import structlog

from factledger.application.memory.inflection import load_lexicons

log = structlog.get_logger(__name__)

# The lemmatiser (its import compiles every language's rules) and the secret detectors (with
# `requests`, which they import): about 12% of the imports of a start together.
DEFERRED_IMPORTS = (
    "simplemma",
    "pysbd",  # the sentence cut's rules (ADR 0176)
    "detect_secrets.core.plugins.util",
    "detect_secrets.plugins.keyword",
)


def import_deferred(names: tuple[str, ...] = DEFERRED_IMPORTS) -> None:
    """Imports `names`, then reads the keyword lexicons (`load_lexicons`: the lemmatiser's
    data is read at its first word, not at its import); a failure is logged by type and left
    for the first use to raise."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            log.warning("deferred_import.failed", module=name, error_type=type(exc).__name__)
    try:
        load_lexicons()
    except (ImportError, OSError, ValueError) as exc:
        log.warning("deferred_import.lexicons_failed", error_type=type(exc).__name__)


def start_deferred_imports(names: tuple[str, ...] = DEFERRED_IMPORTS) -> threading.Thread:
    """Starts `import_deferred` on a daemon thread (an import needs no tearing down)."""
    thread = threading.Thread(
        target=import_deferred, args=(names,), name="factledger-deferred-imports", daemon=True
    )
    thread.start()
    return thread
