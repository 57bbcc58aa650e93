"""Rendering console pages: the templates, the context every page gets, notices and cookies.

Templates are autoescaped (Jinja2's default for `.html` under `Jinja2Templates`): content
from conversations and profiles is shown as text, never as markup.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from pathlib import Path
from typing import Any

from fastapi import Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

from factledger.api.console.session import COOKIE_PATH, ConsoleSession
from factledger.api.http.auth import Role
from factledger.domain.values import render

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(directory=HERE / "templates")
# Each form gets a fresh nonce: the command id of what it submits (`console.actions`).
TEMPLATES.env.globals["new_nonce"] = lambda: secrets.token_urlsafe(18)


@functools.cache
def static_url(name: str) -> str:
    """A static file's address with its content's hash: browsers may keep it for good."""
    digest = hashlib.sha256((HERE / "static" / name).read_bytes()).hexdigest()[:16]
    return f"/console/static/{name}?v={digest}"


TEMPLATES.env.globals["static_url"] = static_url
TEMPLATES.env.filters["render_value"] = lambda value: "—" if value is None else render(value)
STATIC_DIR = HERE / "static"
# What a redirect after an action may announce: fixed texts chosen by code, never input.
NOTICES = {
    "approved": "Approved: the change is in the profile.",
    "rejected": "Rejected: the change will never reach the profile.",
    "forgotten": "Forgotten: the next profile version no longer holds it.",
    "retried": "Retried: the dead letters are pending again.",
    "signed-out": "Signed out.",
}


def render_page(
    request: Request,
    name: str,
    session: ConsoleSession | None,
    *,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    base = frame_context(request, session)
    return TEMPLATES.TemplateResponse(request, name, {**base, **context}, status_code=status_code)


def frame_context(request: Request, session: ConsoleSession | None) -> dict[str, Any]:
    """What the console's frame (`base.html`) shows around every page: who is signed in, the
    links their role sees, the notice a redirect announced."""
    return {
        "session": session,
        "csrf": None if session is None else session.csrf,
        "notice": NOTICES.get(request.query_params.get("notice", "")),
        "reviews": session is not None and session.role in (Role.REVIEWER, Role.ADMIN),
        "administers": session is not None and session.role is Role.ADMIN,
    }


def see_other(url: str, notice: str | None = None) -> RedirectResponse:
    """POST-redirect-GET: the browser loads the page again with a fixed notice."""
    target = url if notice is None else f"{url}{'&' if '?' in url else '?'}notice={notice}"
    return RedirectResponse(target, status_code=303)


def set_cookie(response: Response, name: str, value: str, *, max_age: int, secure: bool) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        httponly=True,
        secure=secure,
        samesite="strict",
    )


def clear_cookie(response: Response, name: str, *, secure: bool) -> None:
    response.delete_cookie(name, path=COOKIE_PATH, httponly=True, secure=secure, samesite="strict")
