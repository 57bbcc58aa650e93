"""The console over HTTP (in process): sign-in and its cookies, roles, CSRF, tenants, events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from uuid import UUID

import httpx
import pytest
import structlog
from support.api_harness import TEST_AUTH, asgi_client, bearer, build_ports, token
from support.console_seed import (
    OTHER_TENANT,
    Seeded,
    csrf_of,
    seed_dead_letter,
    seed_queue,
    sign_in,
)

from factledger.api.bootstrap.runtime import Runtime
from factledger.api.console.app import create_app
from factledger.api.console.pages import static_url
from factledger.api.console.session import SESSION_COOKIE
from factledger.api.http.auth import Role
from factledger.api.settings import ConsoleSettings, RateLimitSettings
from factledger.application.ledger.commands import ApproveChange, ProposeChange, RecordSession
from factledger.domain.events import ChangeConfirmed, ChangeRejected, FactForgotten
from factledger.domain.provenance import Actor, ActorKind, Evidence, Operation, Origin
from factledger.domain.said_lines import SAID_LINES, line_ref
from factledger.domain.transcript import Channel, Message
from factledger.domain.transcript import Role as MessageRole
from factledger.domain.values import ListValue, TextValue
from factledger.testing.manual_clock import ManualClock
from factledger.testing.story.script import JAN, SECRETS, TENANT

NO_LIMITS = RateLimitSettings(enabled=False)


@pytest.fixture
def seeded(ports: Runtime, clock: ManualClock) -> Seeded:
    return seed_queue(ports, clock)


@pytest.fixture
async def web(ports: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(create_app(ports=ports, auth=TEST_AUTH, rate_limit=NO_LIMITS)) as c:
        yield c


def events(ports: Runtime, seeded: Seeded) -> list[object]:
    return list(ports.ledger.events.get(seeded.subject_id))


async def test_sign_in_sets_a_strict_http_only_short_session_cookie(
    web: httpx.AsyncClient, seeded: Seeded
) -> None:
    answer = await sign_in(web)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/console/queue"
    cookie = next(
        h for h in answer.headers.get_list("set-cookie") if h.startswith(f"{SESSION_COOKIE}=")
    )
    flags = cookie.lower()
    assert "httponly" in flags
    assert "samesite=strict" in flags
    assert "path=/console" in flags
    assert "secure" not in flags  # dev: served over plain HTTP
    max_age = int(flags.split("max-age=")[1].split(";")[0])
    assert 0 < max_age <= 900
    queue = await web.get("/console/queue")
    assert queue.status_code == 200
    assert "Review queue" in queue.text


async def test_cookies_are_secure_outside_dev(ports: Runtime, seeded: Seeded) -> None:
    production = TEST_AUTH.model_copy(update={"environment": "production"})
    app = create_app(ports=ports, auth=production, rate_limit=NO_LIMITS)
    transport = httpx.ASGITransport(app=app)
    # A Secure cookie travels over HTTPS only, so this client speaks it.
    async with httpx.AsyncClient(transport=transport, base_url="https://api") as web:
        form = await web.get("/console/sign-in")
        assert "secure" in form.headers["set-cookie"].lower()
        jwt = token(Role.REVIEWER, tenant="acme", auth=production)
        answer = await web.post("/console/sign-in", data={"token": jwt, "csrf": csrf_of(form.text)})
    assert answer.status_code == 303
    assert "secure" in answer.headers["set-cookie"].lower()


@pytest.mark.parametrize("role", [Role.AGENT, Role.SERVICE])
async def test_agent_and_service_tokens_are_refused(
    web: httpx.AsyncClient, seeded: Seeded, role: Role
) -> None:
    answer = await sign_in(web, role)
    assert answer.status_code == 403
    assert "may not use the console" in answer.text
    assert SESSION_COOKIE not in answer.headers.get("set-cookie", "")
    assert (await web.get("/console/queue")).status_code == 303  # still signed out


async def test_a_forged_token_is_refused(web: httpx.AsyncClient) -> None:
    form = await web.get("/console/sign-in")
    answer = await web.post("/console/sign-in", data={"token": "a.b.c", "csrf": csrf_of(form.text)})
    assert answer.status_code == 401


async def test_pages_without_a_session_lead_to_sign_in(web: httpx.AsyncClient) -> None:
    answer = await web.get("/console/queue")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/console/sign-in"


async def test_a_form_without_its_csrf_token_is_refused_and_changes_nothing(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web)
    before = len(events(ports, seeded))
    change = seeded.changes["supplier_a"]
    url = f"/console/subjects/{seeded.subject_id}/proposals/{change}/approve"
    missing = await web.post(url, data={"nonce": "n" * 24})
    wrong = await web.post(url, data={"nonce": "n" * 24, "csrf": "not-the-token"})
    assert missing.status_code == wrong.status_code == 403
    assert "csrf" in missing.text
    assert len(events(ports, seeded)) == before


async def test_a_sign_in_form_without_its_csrf_token_is_refused(web: httpx.AsyncClient) -> None:
    await web.get("/console/sign-in")
    answer = await web.post("/console/sign-in", data={"token": token(Role.REVIEWER)})
    assert answer.status_code == 422  # the form field is missing
    other = await web.post(
        "/console/sign-in", data={"token": token(Role.REVIEWER), "csrf": "forged"}
    )
    assert other.status_code == 403


async def test_a_form_the_browser_marks_cross_site_is_refused_even_with_its_token(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web)
    before = len(events(ports, seeded))
    change = seeded.changes["supplier_a"]
    page = await web.get(f"/console/subjects/{seeded.subject_id}/proposals/{change}")
    url = f"/console/subjects/{seeded.subject_id}/proposals/{change}/approve"
    form = {"csrf": csrf_of(page.text), "nonce": "x" * 24}
    refused = await web.post(url, data=form, headers={"Sec-Fetch-Site": "cross-site"})
    assert refused.status_code == 403
    assert "another site" in refused.text
    assert len(events(ports, seeded)) == before
    # The same form from the console's own pages goes through.
    done = await web.post(url, data=form, headers={"Sec-Fetch-Site": "same-origin"})
    assert done.status_code == 303
    assert len(events(ports, seeded)) > before


async def test_a_sign_in_the_browser_marks_cross_site_is_refused(web: httpx.AsyncClient) -> None:
    form = await web.get("/console/sign-in")
    data = {"token": token(Role.REVIEWER), "csrf": csrf_of(form.text)}
    answer = await web.post("/console/sign-in", data=data, headers={"Sec-Fetch-Site": "cross-site"})
    assert answer.status_code == 403


async def test_another_tenants_subject_is_a_404(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web, tenant=OTHER_TENANT)
    subject, change = seeded.subject_id, seeded.changes["supplier_a"]
    assert (await web.get(f"/console/subjects/{subject}")).status_code == 404
    assert (await web.get(f"/console/subjects/{subject}/proposals/{change}")).status_code == 404
    assert (await web.get(f"/console/subjects/{subject}/sessions")).status_code == 404
    page = await web.get("/console/queue")
    assert "lead-0042" not in page.text
    own = await web.get(f"/console/subjects/{seeded.other_subject_id}")
    before = len(events(ports, seeded))
    url = f"/console/subjects/{subject}/proposals/{change}/approve"
    answer = await web.post(url, data={"csrf": csrf_of(own.text), "nonce": "n" * 24})
    assert answer.status_code == 404
    assert len(events(ports, seeded)) == before


async def test_approve_and_reject_record_the_reviewer_as_the_api_does(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web)
    subject = seeded.subject_id
    page = await web.get(f"/console/subjects/{subject}/proposals/{seeded.changes['supplier_a']}")
    csrf = csrf_of(page.text)
    approve = f"/console/subjects/{subject}/proposals/{seeded.changes['supplier_a']}/approve"
    done = await web.post(approve, data={"csrf": csrf, "nonce": "a" * 24, "note": "checked"})
    assert done.status_code == 303
    reject = f"/console/subjects/{subject}/proposals/{seeded.changes['inference']}/reject"
    empty = await web.post(reject, data={"csrf": csrf, "nonce": "b" * 24, "reason": " "})
    assert empty.status_code == 422
    assert "reason" in empty.text
    refused = await web.post(reject, data={"csrf": csrf, "nonce": "b" * 24, "reason": "a guess"})
    assert refused.status_code == 303
    recorded = events(ports, seeded)
    confirmed = [e for e in recorded if isinstance(e, ChangeConfirmed)]
    rejected = [e for e in recorded if isinstance(e, ChangeRejected)]
    assert [c.confirmed_by for c in confirmed] == [{"kind": "staff", "id": "reviewer-1"}]
    assert confirmed[0].note == "checked"
    assert [(r.rejected_by, r.reason) for r in rejected] == [
        ({"kind": "staff", "id": "reviewer-1"}, "a guess")
    ]


async def test_a_repeated_form_decides_once(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web)
    subject, change = seeded.subject_id, seeded.changes["budget"]
    page = await web.get(f"/console/subjects/{subject}/proposals/{change}")
    form = {"csrf": csrf_of(page.text), "nonce": "same-nonce-0123456789"}
    url = f"/console/subjects/{subject}/proposals/{change}/approve"
    assert (await web.post(url, data=form)).status_code == 303
    assert (await web.post(url, data=form)).status_code == 303
    assert sum(isinstance(e, ChangeConfirmed) for e in events(ports, seeded)) == 1


async def test_bulk_decisions_show_a_conflict_instead_of_swallowing_it(
    web: httpx.AsyncClient, seeded: Seeded
) -> None:
    await sign_in(web)
    subject = seeded.subject_id
    queue = await web.get("/console/queue")
    csrf = csrf_of(queue.text)
    picked = [f"{subject}/{seeded.changes[n]}" for n in ("supplier_a", "budget")]
    first = await web.post(
        "/console/queue/decide",
        data={"csrf": csrf, "nonce": "c" * 24, "action": "approve", "change": picked},
    )
    assert first.status_code == 200
    again = await web.post(
        "/console/queue/decide",
        data={"csrf": csrf, "nonce": "d" * 24, "action": "approve", "change": picked},
    )
    assert again.status_code == 409
    assert again.text.count("ChangeNotPendingError") == 2


async def test_roles_follow_the_api(web: httpx.AsyncClient, ports: Runtime, seeded: Seeded) -> None:
    subject = seeded.subject_id
    await sign_in(web, Role.ANALYST)
    assert (await web.get("/console/queue")).status_code == 403
    assert (await web.get(f"/console/subjects/{subject}")).status_code == 200
    assert (await web.get(f"/console/subjects/{subject}/sessions")).status_code == 403
    web.cookies.clear()
    await sign_in(web, Role.REVIEWER)
    page = await web.get(f"/console/subjects/{subject}/sessions")
    assert page.status_code == 200
    forget = await web.post(
        f"/console/subjects/{subject}/forget",
        data={"csrf": csrf_of(page.text), "nonce": "e" * 24, "field": "x", "reason": "r"},
    )
    assert forget.status_code == 403  # reviewers may not forget (ADR 0010)
    assert (await web.get("/console/operations")).status_code == 403


async def test_an_admin_forgets_a_field_and_retries_a_dead_letter(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    item = await seed_dead_letter(ports, seeded.subject_id)
    await sign_in(web, Role.ADMIN)
    subject = seeded.subject_id
    page = await web.get(f"/console/subjects/{subject}/proposals/{seeded.changes['supplier_a']}")
    csrf = csrf_of(page.text)
    url = f"/console/subjects/{subject}/proposals/{seeded.changes['supplier_a']}/approve"
    await web.post(url, data={"csrf": csrf, "nonce": "f" * 24})
    confirm = await web.get(f"/console/subjects/{subject}/forget?field=supplier")
    assert "Reason (required)" in confirm.text
    forget = f"/console/subjects/{subject}/forget"
    done = await web.post(
        forget, data={"csrf": csrf, "nonce": "g" * 24, "field": "supplier", "reason": "asked"}
    )
    assert done.status_code == 303
    forgotten = [e for e in events(ports, seeded) if isinstance(e, FactForgotten)]
    assert [(f.field, f.requested_by) for f in forgotten] == [
        ("supplier", {"kind": "staff", "id": "admin-1"})
    ]
    # The Sessions page shows the line that stated the supplier as forgotten, never its
    # words (it stated the budget too: the line goes whole); the other lines stay.
    sessions = await web.get(f"/console/subjects/{subject}/sessions")
    assert "Supplier A" not in sessions.text
    assert "40k" not in sessions.text
    assert "[forgotten: these words were erased]" in sessions.text
    assert "Who supplies your packaging today?" in sessions.text
    ops = await web.get("/console/operations")
    assert "MemoryUnavailableError" in ops.text
    retry = await web.post(f"/console/operations/dead-letters/{item}/retry", data={"csrf": csrf})
    assert retry.status_code == 303
    assert ports.sync_store is not None
    assert await ports.sync_store.dead_letters(tenant="acme") == []


async def test_pages_show_content_and_logs_do_not(web: httpx.AsyncClient, seeded: Seeded) -> None:
    subject = seeded.subject_id
    with structlog.testing.capture_logs() as logs:
        await sign_in(web)
        shown = [
            (await web.get(path)).text
            for path in (
                "/console/queue",
                f"/console/subjects/{subject}",
                f"/console/subjects/{subject}/sessions",
                f"/console/subjects/{subject}/memory",
                f"/console/subjects/{subject}/proposals/{seeded.changes['intent']}",
            )
        ]
        page = await web.get(f"/console/subjects/{subject}/proposals/{seeded.changes['intent']}")
        url = f"/console/subjects/{subject}/proposals/{seeded.changes['intent']}/reject"
        await web.post(
            url, data={"csrf": csrf_of(page.text), "nonce": "h" * 24, "reason": "a secret reason"}
        )
    assert "Supplier A" in shown[0]
    assert "Maybe next quarter" in shown[2]
    assert logs
    for secret in (*SECRETS, "a secret reason"):
        assert secret not in repr(logs)


async def test_a_disabled_console_is_not_served(ports: Runtime) -> None:
    app = create_app(ports=ports, auth=TEST_AUTH, console=ConsoleSettings(enabled=False))
    async with asgi_client(app) as web:
        assert (await web.get("/console/sign-in")).status_code == 404
        assert (await web.get("/healthz")).status_code == 200


async def test_pages_are_not_cached_framed_or_given_foreign_scripts(
    web: httpx.AsyncClient,
) -> None:
    page = await web.get("/console/sign-in")
    assert page.headers["cache-control"] == "no-store"
    assert page.headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    style = await web.get("/console/static/console.css")
    assert style.status_code == 200
    assert "focus-visible" in style.text
    # The app's own files are kept by the browser (a page is one request); their addresses
    # change with their content, so a release is fetched at once.
    assert "immutable" in style.headers["cache-control"]
    assert "script-src 'self'" in style.headers["content-security-policy"]
    assert static_url("console.css") in page.text
    assert static_url("console.css").startswith("/console/static/console.css?v=")


async def test_a_field_changed_meanwhile_is_shown_as_a_conflict(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    # Given another supplier proposal, approved first, on the same profile version
    subject = seeded.subject_id
    other = ProposeChange(
        TENANT,
        subject,
        "supplier",
        Operation.SET,
        TextValue("Supplier C"),
        Origin.INFERRED,
        Actor(ActorKind.STAFF, "reviewer-2"),
        based_on_version=0,
    )
    ports.ledger.propose_change(other)
    ports.ledger.approve_change(ApproveChange(TENANT, subject, other.change_id, "reviewer-2"))
    await sign_in(web)
    # Then the queue says so before anyone tries
    queue = await web.get("/console/queue")
    assert "Conflict: the field changed after this was proposed" in queue.text
    # And approving it anyway is refused, shown, and changes nothing
    change = seeded.changes["supplier_a"]
    url = f"/console/subjects/{subject}/proposals/{change}/approve"
    before = len(events(ports, seeded))
    answer = await web.post(url, data={"csrf": csrf_of(queue.text), "nonce": "i" * 24})
    assert answer.status_code == 409
    assert "StaleChangeError" in answer.text
    assert f'href="/console/subjects/{subject}/proposals/{change}"' in answer.text
    assert len(events(ports, seeded)) == before


async def test_an_admin_forgets_a_memory_with_a_reason(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    await sign_in(web, Role.ADMIN)
    subject = seeded.subject_id
    confirm = await web.get(f"/console/subjects/{subject}/forget?memory_id=mem-1")
    assert confirm.status_code == 200
    form = {"csrf": csrf_of(confirm.text), "nonce": "j" * 24, "memory_id": "mem-1"}
    url = f"/console/subjects/{subject}/forget"
    assert (await web.post(url, data=form)).status_code == 422  # no reason
    assert (await web.post(url, data={**form, "reason": "asked"})).status_code == 303
    forgotten = [e for e in events(ports, seeded) if isinstance(e, FactForgotten)]
    assert [(f.memory_id, f.reason) for f in forgotten] == [("mem-1", "asked")]


async def test_what_people_wrote_is_shown_as_text_never_as_markup(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    markup = '<script src="/x.js"></script><b>bold</b>'
    said = Message(MessageRole.SUBJECT, f"We said {markup}", JAN)
    ports.ledger.record_session(
        RecordSession(TENANT, seeded.subject_id, "chat-markup", Channel.CHAT, JAN, JAN, (said,))
    )
    await sign_in(web)
    page = await web.get(f"/console/subjects/{seeded.subject_id}/sessions")
    assert markup not in page.text
    assert "&lt;script src=&#34;/x.js&#34;&gt;&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;" in page.text


def _decisions(ports: Runtime, subject: UUID) -> list[tuple[str, dict[str, object]]]:
    """The decision events of a subject, without what differs between two runs by design."""
    skipped = {"command_id", "originator_id", "originator_version", "timestamp"}
    return [
        (type(e).__name__, {k: v for k, v in vars(e).items() if k not in skipped})
        for e in ports.ledger.events.get(subject)
        if isinstance(e, ChangeConfirmed | ChangeRejected)
    ]


async def test_console_decisions_are_the_apis_events(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    # Given the same queue in a second runtime, decided through the JSON API
    api_clock = ManualClock()
    api_ports = build_ports(api_clock)
    twin = seed_queue(api_ports, api_clock)
    reviewer = bearer(token(Role.REVIEWER, tenant=TENANT))
    async with asgi_client(create_app(ports=api_ports, auth=TEST_AUTH)) as api:
        base = f"/v1/subjects/{twin.subject_id}/proposals"
        approve = f"{base}/{twin.changes['supplier_a']}/approve"
        reject = f"{base}/{twin.changes['inference']}/reject"
        assert (await api.post(approve, json={"note": "ok"}, headers=reviewer)).status_code == 200
        rejected = await api.post(reject, json={"reason": "a guess"}, headers=reviewer)
        assert rejected.status_code == 200
    # When the console takes the same decisions
    await sign_in(web)
    subject = seeded.subject_id
    page = await web.get("/console/queue")
    form = {"csrf": csrf_of(page.text), "nonce": "k" * 24}
    base = f"/console/subjects/{subject}/proposals"
    await web.post(f"{base}/{seeded.changes['supplier_a']}/approve", data={**form, "note": "ok"})
    await web.post(
        f"{base}/{seeded.changes['inference']}/reject", data={**form, "reason": "a guess"}
    )
    # Then the events are the same, reviewer and all
    assert _decisions(ports, subject) == _decisions(api_ports, twin.subject_id)
    assert len(_decisions(ports, subject)) == 2


async def test_a_csrf_token_of_any_text_is_a_refusal_not_an_error(
    web: httpx.AsyncClient, seeded: Seeded
) -> None:
    await sign_in(web)
    url = f"/console/subjects/{seeded.subject_id}/proposals/{seeded.changes['budget']}/approve"
    answer = await web.post(url, data={"nonce": "n" * 24, "csrf": "é∂"})
    assert answer.status_code == 403
    await web.get("/console/sign-in")
    signing_in = await web.post("/console/sign-in", data={"token": "x", "csrf": "é∂"})
    assert signing_in.status_code == 403


async def test_a_removal_is_shown_as_the_items_it_takes_off(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    subject = seeded.subject_id
    by = Actor(ActorKind.STAFF, "reviewer-2")
    tools_approved(ports, subject, "Jira", "Trello")
    removal = ProposeChange(
        TENANT,
        subject,
        "tools",
        Operation.REMOVE,
        ListValue(("Trello",)),
        Origin.INFERRED,
        by,
        based_on_version=1,
    )
    ports.ledger.propose_change(removal)
    await sign_in(web)

    queue = await web.get("/console/queue")
    assert '<strong class="removal">take off:</strong> Trello' in queue.text
    page = await web.get(f"/console/subjects/{subject}/proposals/{removal.change_id}")
    assert "Items to take off" in page.text
    assert "Jira, Trello (version 1)" in page.text


def tools_approved(ports: Runtime, subject: UUID, *items: str) -> None:
    """A reviewer's inferred `tools` list, approved: profile version 1."""
    listed = ProposeChange(
        TENANT, subject, "tools", Operation.APPEND, ListValue(items), Origin.INFERRED,
        Actor(ActorKind.STAFF, "reviewer-2"), based_on_version=0,
    )  # fmt: skip
    ports.ledger.propose_change(listed)
    ports.ledger.approve_change(ApproveChange(TENANT, subject, listed.change_id, "reviewer-2"))


async def test_a_request_to_forget_one_item_shows_what_it_keeps(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    subject = seeded.subject_id
    tools_approved(ports, subject, "Jira", "Trello")
    asks = "Please delete what I told you about Trello."
    at = ports.ledger.clock.now()
    lines = (Message(MessageRole.SUBJECT, asks, at),)
    ports.ledger.record_session(
        RecordSession(TENANT, subject, "forget-1", Channel.CHAT, at, at, lines)
    )
    request = ProposeChange(
        TENANT, subject, "tools", Operation.FORGET, ListValue(("Trello",)), Origin.STATED,
        Actor(ActorKind.MODEL, "m"), based_on_version=1,
        evidence=Evidence("forget-1", 0, asks),
    )  # fmt: skip
    ports.ledger.propose_change(request)
    await sign_in(web)

    queue = await web.get("/console/queue")
    assert '<strong class="forget-request">asks to forget:</strong> Trello' in queue.text
    page = await web.get(f"/console/subjects/{subject}/proposals/{request.change_id}")
    assert 'class="value forget-items">Trello</span> from <code>tools</code>' in page.text
    assert '<dd class="kept-items">Jira <span class="muted">(of Jira, Trello' in page.text


async def test_an_admin_forgets_one_item_of_a_list_and_keeps_the_others(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    subject = seeded.subject_id
    tools_approved(ports, subject, "Jira", "Trello", "Asana")
    await sign_in(web, Role.ADMIN)
    confirm = await web.get(f"/console/subjects/{subject}/forget?field=tools")
    assert '<input type="checkbox" name="items" value="Trello">' in confirm.text
    csrf = csrf_of(confirm.text)
    done = await web.post(
        f"/console/subjects/{subject}/forget",
        data={
            "csrf": csrf,
            "nonce": "k" * 24,
            "field": "tools",
            "reason": "asked on the phone",
            "items": ["Trello", "Asana"],
        },
    )
    assert done.status_code == 303
    kept = ports.ledger.subject(TENANT, subject).fields["tools"]
    assert kept.value == ListValue(("Jira",))
    page = await web.get(f"/console/subjects/{subject}")
    assert "Trello" not in page.text


async def test_a_request_to_forget_what_was_said_shows_the_lines_it_names(
    web: httpx.AsyncClient, ports: Runtime, seeded: Seeded
) -> None:
    subject = seeded.subject_id
    said, asks = "My ex and I split up in the spring.", "Please forget what I said about my ex."
    at = ports.ledger.clock.now()
    for session_id, text in (("said-1", said), ("said-2", asks)):
        lines = (Message(MessageRole.SUBJECT, text, at),)
        ports.ledger.record_session(
            RecordSession(TENANT, subject, session_id, Channel.CHAT, at, at, lines)
        )
    request = ProposeChange(
        TENANT, subject, SAID_LINES, Operation.FORGET_SAID, ListValue((line_ref("said-1", 0),)),
        Origin.STATED, Actor(ActorKind.MODEL, "m"), based_on_version=0,
        evidence=Evidence("said-2", 0, asks),
    )  # fmt: skip
    ports.ledger.propose_change(request)
    await sign_in(web)

    queue = await web.get("/console/queue")
    assert '<strong class="forget-request">asks to forget what was said</strong>' in queue.text
    page = await web.get(f"/console/subjects/{subject}/proposals/{request.change_id}")
    assert '<ul class="said-lines">' in page.text
    assert f"message 0: <q>{said}</q>" in page.text
