"""The team server (`labeler app --team` runs this file): the app of streamlit_app.py as Streamlit's
ASGI `st.App`, with the Streamlit routes a shared server must not answer closed to those who have
no business with them.

`/_stcore/metrics` answers anyone, signed in or not, with the server's session counts and cache
sizes, and costs a walk of every session's state; Streamlit 1.67 has no option to turn it off
(`streamlit config show`), so a middleware answers 404 in its place. `/_stcore/upload_file/` takes
a file only into a session signed in as someone who may upload (pages/_uploads.py). A session not signed
in gets about one script run a second from its websocket (pages/_visitors.py). `/_stcore/health`
stays open: a reverse proxy and the tests poll it. The routes of pages/_session_cookie.py set and clear
the cookie that keeps a password sign-in across reloads; pages/_grade_route.py's saves a grade key ahead of
the page's rerun.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config

from labeler_pages import _grade_route as grade_route
from labeler_pages._session_cookie import routes
from labeler_pages._uploads import may_upload
from labeler_pages._visitors import STREAM, paced

CLOSED = "/_stcore/metrics"
UPLOAD = "/_stcore/upload_file/"  # then <session id>/<file id>


class TeamGate:
    """ASGI middleware: 404 for CLOSED (under any base URL path); 403 for an upload into a browser
    session not signed in as someone who may upload, answered before its body is read, so a visitor
    on the sign-in screen cannot park bytes in the server's memory; everything else passed on."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket" and scope.get("path", "").endswith(STREAM):
            return await self.app(scope, *paced(scope, receive, send))  # signed out: a run a second
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path.rstrip("/").endswith(CLOSED):
            return await _refuse(send, 404, b"Not found")
        if UPLOAD in path and scope.get("method") in ("PUT", "POST"):
            session_id = path.split(UPLOAD, 1)[1].split("/", 1)[0]
            if not may_upload(session_id):
                return await _refuse(send, 403, b"Sign in as someone who may upload first.")
        await self.app(scope, receive, send)


async def _refuse(send, status: int, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


app = st.App(str(Path(__file__).with_name("streamlit_app.py")), middleware=[Middleware(TeamGate)],
             routes=[*routes(config.get_option("server.baseUrlPath")),
                     *grade_route.routes(config.get_option("server.baseUrlPath"))])
