"""Team mode: a browser session not signed in may make the server run its script about once a second.

Each message a browser sends on its websocket (`/_stcore/stream`) asks for a script run: a rerun of
the sign-in screen costs ~13 ms of the server's CPU even when the try is refused unchecked (labeler_app.throttle),
so twenty clients looping on refusals would keep a core busy. The team server (team_app.py) passes
every websocket through `paced`: until its session is signed in, each message waits for its client's
budget (labeler_app.throttle.RunBudget) in the connection's own coroutine — an `asyncio.sleep`, so no thread,
no CPU and no other session is held. A signed-in session (`mark_signed_in`) is never paced.
`SessionSet` holds such session ids (pages/_uploads.py keeps those that may upload in another).
"""
from __future__ import annotations

import asyncio
import threading

from labeler_app.throttle import RunBudget, client_key

STREAM = "/_stcore/stream"
BUDGET = RunBudget()


class SessionSet:
    """Browser session ids with some standing (signed in, may upload), read by the server's event loop
    and the janitor while the sessions' script threads change it."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def mark(self, member: bool) -> bool:
        """Put this run's browser session in the set (or out); False outside a Streamlit run (AppTest)."""
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is None:
            return False
        with self._lock:
            (self._ids.add if member else self._ids.discard)(ctx.session_id)
        return True

    def __contains__(self, session_id: object) -> bool:
        with self._lock:
            return session_id in self._ids


_signed_in = SessionSet()


def mark_signed_in(signed_in: bool) -> None:
    """Record whether this run's browser session is signed in (called on every run of the entry script)."""
    _signed_in.mark(signed_in)


def paced(scope, receive, send):
    """`receive` and `send` of a websocket on STREAM: messages of a session not signed in wait for budget."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    peer = (scope.get("client") or (None,))[0]
    client = client_key(peer, {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])})
    session: dict[str, str] = {}

    async def paced_send(message):
        if "id" not in session and message.get("type") == "websocket.send" and message.get("bytes"):
            msg = ForwardMsg()
            msg.ParseFromString(message["bytes"])  # until the session's id is known: the first run's first message
            if msg.WhichOneof("type") == "new_session":
                session["id"] = msg.new_session.initialize.session_id
        await send(message)

    async def paced_receive():
        message = await receive()
        if message.get("type") == "websocket.receive" and session.get("id") not in _signed_in:
            wait = BUDGET.take(client)
            if wait:
                await asyncio.sleep(wait)
        return message

    return paced_receive, paced_send
