"""Team mode: a password sign-in kept across reloads in an HttpOnly cookie that a server route sets.

JavaScript cannot set an HttpOnly cookie, and a Streamlit page answers over its websocket, not over
HTTP: so after a sign-in the page mints a one-time code (labeler_app.accounts.cookie_code, valid a minute,
stored hashed) and has the browser POST it (the body, never a URL: no proxy log shows it) to
SESSION_ROUTE; the route trades the code for a second token of the session (once, from the client
that signed in only; the tab keeps its own) and answers 204 with `Set-Cookie: labeler_session=<token>; HttpOnly;
SameSite=Strict; Path=/` (and `Secure` when served over https, directly or behind a proxy on this
machine that says so). The page stays as it is: nothing reloads, no click is lost. A later page load
reads the cookie (`st.context.cookies`, pages/_auth.py) and checks it against the session row: live,
user enabled, same client. Sign-out ends the row and POSTs to SIGN_OUT_ROUTE, which ends the
cookie's session too and clears the cookie. Both refuse a request another site started (its Origin)
and a body past MAX_BODY; neither logs a code or a token.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import streamlit as st
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from labeler_app import accounts as acc
from labeler_app.throttle import client_key

COOKIE = "labeler_session"
SESSION_ROUTE = "/_labeler/session"
SIGN_OUT_ROUTE = "/_labeler/sign-out"
log = logging.getLogger("labeler.accounts")
MAX_BODY = 256  # bytes: a code is 43
# The request carries the code; the cookie comes from the route's answer, never from script.
_POST = """<script>
fetch({route}, {{method: "POST", body: {code}, credentials: "same-origin", cache: "no-store"}});
</script>"""


def routes(base_path: str = "", store: Callable[[], Any] | None = None) -> list[Route]:
    """The team server's cookie routes (st.App(routes=...)), under Streamlit's server.baseUrlPath, over
    `store()` (default: the app's database, labeler_pages._loaders)."""
    base, of = base_prefix(base_path), store or _app_store

    async def session(request: Request) -> Response:
        return await _session(request, of())

    async def sign_out(request: Request) -> Response:
        return await _sign_out(request, of())

    return [Route(base + SESSION_ROUTE, session, methods=["POST"]),
            Route(base + SIGN_OUT_ROUTE, sign_out, methods=["POST"])]


def fetch_cookie(code: str) -> None:
    """Have this browser POST `code` to SESSION_ROUTE, whose answer sets the session cookie."""
    _post(SESSION_ROUTE, code)


def clear_cookie() -> None:
    """Have this browser POST to SIGN_OUT_ROUTE, whose answer clears the session cookie."""
    _post(SIGN_OUT_ROUTE, "")


def cookie_token() -> str | None:
    """The session token in this browser's cookie (as the websocket connection brought it), if any."""
    token = st.context.cookies.get(COOKIE)
    return token if isinstance(token, str) and token else None  # AppTest, without a connection: a stand-in object


def _post(route: str, body: str) -> None:
    from streamlit import config

    path = base_prefix(config.get_option("server.baseUrlPath")) + route
    st.html(_POST.format(route=js_literal(path), code=js_literal(body)), unsafe_allow_javascript=True)


def js_literal(text: str) -> str:
    """A JavaScript string literal that cannot end the <script> it sits in (the code is URL-safe base64
    minted here; the path comes from the server's config)."""
    return json.dumps(text).replace("<", "\\u003c")


def base_prefix(base_path: str | None) -> str:
    """Streamlit's server.baseUrlPath as a path prefix: "" or "/base"."""
    base = (base_path or "").strip("/")
    return f"/{base}" if base else ""


async def _session(request: Request, store) -> Response:
    refused, body = await checked(request)
    if refused is not None:
        return refused
    code = body.decode("ascii", "replace").strip()
    traded = await run_in_threadpool(acc.exchange_code, store, code, _fingerprint(request)) if code else None
    if traded is None:
        log.warning("session cookie refused: a code used, expired, unknown or from another client (%s)",
                    client_key(peer(request), dict(request.headers)))
        return answer(403)
    token, seconds_left = traded
    done = answer(204)
    done.set_cookie(COOKIE, token, max_age=seconds_left, path="/", secure=_https(request), httponly=True,
                    samesite="strict")
    return done


async def _sign_out(request: Request, store) -> Response:
    refused, _ = await checked(request)
    if refused is not None:
        return refused
    token = request.cookies.get(COOKIE)
    if token:
        await run_in_threadpool(acc.sign_out, store, token)
    done = answer(204)
    done.delete_cookie(COOKIE, path="/", secure=_https(request), httponly=True, samesite="strict")
    return done


async def checked(request: Request, max_body: int = MAX_BODY) -> tuple[Response | None, bytes]:
    """(a refusal or None, the body): 403 for a request another site started (a browser names the page's
    origin on every POST), 413 for a body past `max_body` (counted as it arrives; the rest is never read)."""
    origin, host = request.headers.get("origin", ""), request.headers.get("host", "")
    if not host or urlsplit(origin).netloc != host:
        return answer(403), b""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            return answer(413), b""
    return None, body


def answer(status: int) -> Response:
    """An empty answer that no cache keeps and that names no page it came from."""
    return Response(status_code=status, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})


def peer(request: Request) -> str | None:
    """The address the request came from (None when the server does not know it)."""
    return request.client.host if request.client else None


def _fingerprint(request: Request) -> str:
    return acc.client_fingerprint(peer(request), dict(request.headers))


def _https(request: Request) -> bool:
    """Served over https: directly, or through a reverse proxy on this machine that says so."""
    if request.url.scheme == "https":
        return True
    proxied = peer(request) in ("127.0.0.1", "::1")
    return proxied and request.headers.get("x-forwarded-proto", "").split(",")[-1].strip().lower() == "https"


def _app_store():
    from labeler_app.stores import database_url
    from labeler_pages._loaders import _store as shared

    return shared(database_url())
