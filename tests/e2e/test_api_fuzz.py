"""Fuzzing the whole API from its own OpenAPI schema, as a service and as an agent: whatever
schemathesis sends, nothing answers 5xx, and every answer conforms to the schema (status code,
content type, headers, body).

The app (`support.fuzz_app`: the embedded default in memory, every part configured) runs under
uvicorn on loopback in a process of its own. Not on a thread of the test's: hypothesis parses
source with `ast` on the test's thread while the app reads its model archives on its own, and
CPython 3.11 before 3.11.8 can fail two AST parses that overlap across threads (issue 106905
there; the product serialises its own readings, `adapters/numpy_archives.py`).

Bounded by `FACTLEDGER_FUZZ_EXAMPLES` (examples per operation and token): the default keeps
`make test` fast (a few hundred cases); `FACTLEDGER_FUZZ_EXAMPLES=100` runs about three
thousand cases per token.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from support import fuzz_app
from support.api_fuzz import CALLERS, Scene, check_case, read_every_event_page, set_the_scene
from support.serve_process import serving_app

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = int(os.environ.get("FACTLEDGER_FUZZ_EXAMPLES", "5"))

# The served app's schema is the same factory's (one factory, one document).
# The event stream never ends, so a fuzz case would wait on it forever; its parameters and
# roles have their own tests (tests/e2e/test_event_stream.py, test_api_roles.py).
schema = schemathesis.openapi.from_dict(fuzz_app.app().openapi()).exclude(path="/v1/events/stream")
# The history import's body is NDJSON text (its schema: a string); sent as its UTF-8 bytes.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    """The server, with a subject, an ended and an open session and a pending proposal."""
    with serving_app("support.fuzz_app:app", tmp_path_factory.mktemp("fuzz")) as url:
        yield set_the_scene(url)


@pytest.mark.parametrize("caller", sorted(CALLERS))
@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)
def test_no_input_makes_the_api_fail_or_break_its_schema(
    case: Any, caller: str, live: Scene
) -> None:
    check_case(case, caller, live)


def test_the_analyst_reads_the_fuzzed_subjects_history_in_pages_of_500(live: Scene) -> None:
    assert read_every_event_page(live.url, live.subject_id) >= 1
