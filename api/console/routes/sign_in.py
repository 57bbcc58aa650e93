"""Sign-in and sign-out: a platform token is accepted once and turned into a session cookie.

The token is verified exactly as a bearer token is (`TokenVerifier`), under the same failed-
authentication limit per client address; agent and service tokens are refused. The session
ends when the token would have, or after `session_ttl_s`, whichever comes first.
"""

from __future__ import annotations

import hmac
import time
from typing import Annotated

import jwt
import structlog
from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from factledger.api.console.guard import (
    CONSOLE_ROLES,
    CSRF,
    ConsoleDep,
    CsrfRefusedError,
    SessionDep,
    refuse_cross_site,
)
from factledger.api.console.pages import clear_cookie, render_page, see_other, set_cookie
from factledger.api.console.session import SESSION_COOKIE, SIGN_IN_COOKIE, SIGN_IN_TTL_S
from factledger.api.http.auth import Principal, Role
from factledger.api.http.errors import AuthenticationError, PermissionDeniedError

router = APIRouter()
log = structlog.get_logger(__name__)
MAX_TOKEN_CHARS = 64 * 1024  # the verifier applies the configured, smaller limit


@router.get("/", include_in_schema=False)
async def home() -> RedirectResponse:
    return see_other("/console/queue")


@router.get("/sign-in", response_class=HTMLResponse)
async def sign_in_form(request: Request, console: ConsoleDep) -> HTMLResponse:
    cookie, nonce = console.signer.sign_in_nonce(now=time.time())
    response = render_page(request, "sign_in.html", None, sign_in_csrf=nonce)
    set_cookie(
        response, SIGN_IN_COOKIE, cookie, max_age=SIGN_IN_TTL_S, secure=console.secure_cookies
    )
    return response


async def _verified(request: Request, console: ConsoleDep, token: str) -> Principal:
    limiter = console.api.limiter
    address = request.client.host if request.client is not None else "unknown"
    if limiter is not None:
        await limiter.check_address(address)
    try:
        principal = console.api.verifier.verify(token)
    except AuthenticationError:
        log.info("console.sign_in_refused", error_type="AuthenticationError")
        if limiter is not None:
            await limiter.failed(address)
        raise
    if principal.role not in CONSOLE_ROLES:
        log.info(
            "console.sign_in_refused",
            error_type="PermissionDeniedError",
            role=principal.role.value,
        )
        raise PermissionDeniedError(f"role {principal.role.value} may not use the console")
    log.info("console.signed_in", role=principal.role.value, tenant=principal.tenant)
    return principal


@router.post("/sign-in")
async def sign_in(
    request: Request,
    console: ConsoleDep,
    token: Annotated[str, Form(min_length=1, max_length=MAX_TOKEN_CHARS)],
    csrf: Annotated[str, Form(min_length=1, max_length=100)],
) -> RedirectResponse:
    refuse_cross_site(request)
    expected = console.signer.read_sign_in_nonce(
        request.cookies.get(SIGN_IN_COOKIE), now=time.time()
    )
    if expected is None or not hmac.compare_digest(expected.encode(), csrf.encode()):
        raise CsrfRefusedError("csrf: the sign-in form's token is missing or has expired")
    principal = await _verified(request, console, token.strip())
    # Verified above; only its expiry is read here, so the session never outlives the token.
    token_exp = int(jwt.decode(token.strip(), options={"verify_signature": False})["exp"])
    now = int(time.time())
    expires_at = min(token_exp, now + console.settings.session_ttl_s)
    value, _ = console.signer.open_session(principal, expires_at=expires_at)
    landing = "/console/subjects" if principal.role is Role.ANALYST else "/console/queue"
    response = see_other(landing)
    secure = console.secure_cookies
    set_cookie(response, SESSION_COOKIE, value, max_age=max(1, expires_at - now), secure=secure)
    clear_cookie(response, SIGN_IN_COOKIE, secure=secure)
    return response


@router.post("/sign-out", dependencies=[CSRF])
async def sign_out(console: ConsoleDep, session: SessionDep) -> RedirectResponse:
    response = see_other("/console/sign-in", "signed-out")
    clear_cookie(response, SESSION_COOKIE, secure=console.secure_cookies)
    return response
