"""The team server (`labeler app --team` runs this file): the app of streamlit_app.py as Streamlit's
ASGI `st.App`, with the Streamlit routes a shared server must not answer closed.

`/_stcore/metrics` answers anyone, signed in or not, with the server's session counts and cache
sizes, and costs a walk of every session's state; Streamlit 1.67 has no option to turn it off
(`streamlit config show`), so a middleware answers 404 in its place. `/_stcore/health` stays open:
a reverse proxy and the tests poll it.
"""
from __future__ import annotations

import streamlit as st
from starlette.middleware import Middleware

CLOSED = ("/_stcore/metrics",)


class ClosedRoutes:
    """ASGI middleware: 404 for the CLOSED paths (under any base URL path), everything else passed on."""

    def __init__(self, app, paths: tuple[str, ...] = CLOSED) -> None:
        self.app, self.paths = app, paths

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/").endswith(self.paths):
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
            await send({"type": "http.response.body", "body": b"Not found"})
            return
        await self.app(scope, receive, send)


app = st.App("streamlit_app.py", middleware=[Middleware(ClosedRoutes)])
