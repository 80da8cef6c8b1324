"""A digit's grade saved over HTTP, ahead of the page's rerun.

A grade key used to be saved by the judging fragment's rerun: the browser sends the click, the server
runs the callback (the write) and then redraws the whole judging area (order, metric preview, stopping
estimate, every card) before the browser hears that it is saved: a quarter of a second, more on a busy
machine. Now the key POSTs the grade to GRADE_ROUTE, which writes it and answers; the card shows it
saved; then the page clicks the grade as before, and the rerun that click starts redraws the rest and
finds the grade written (`written_ahead`), so it does not write it twice.

The route follows pages/_session_cookie.py's security model. Each run of the judging area mints a
ticket (`mint`: 32 random bytes; this process keeps only its digest, with what it is for) bound to the
browser session, the question and the documents of its cards in order, and to how its user is
re-checked; the page holds it in the focus mark (never in a URL). The route takes a POST of
`{"ticket", "card", "grade"}` from this site only (Origin), a body of at most MAX_BODY bytes, the
ticket once and within TICKET_LIFETIME (the rerun mints the next), only while the session's websocket
is open, and re-checks the user on every request (team mode: the session row live, the user enabled,
the same client; the role as the database has it now, pages/_auth.py `route_recheck`). It writes
through `labeler_app.label.grade`, the use case of the click: the role checked there, the grade
recorded under the user's name, a replaced grade kept in the history. Any refusal answers 403 (409 for
a grade the use case refuses) and the page falls back to the click, the old path, which says why
(a sign-in form, an error) — and after a server restart, where the new process knows no ticket, is
the path pages/_restart.py keeps safe. Nothing of a ticket is logged.
"""
from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from labeler.corpus import Corpus
from labeler.errors import LabelerError
from labeler.passwords import token_digest
from labeler_app import accounts as acc
from labeler_app import label as lb
from labeler_app.access import Actor
from labeler_app.label import CandidateView
from labeler_app.stores import Store
from labeler_pages._session_cookie import answer, base_prefix, checked, js_literal, peer

GRADE_ROUTE = "/_labeler/grade"
MAX_BODY = 128  # bytes: {"ticket": <43 characters>, "card": 123, "grade": 3} is about 75
TICKET_LIFETIME = 15 * 60.0  # seconds: a tab left longer grades by the click, which mints the next
log = logging.getLogger("labeler.grade_route")
Recheck = Callable[[str], "Actor | None"]  # the request's client fingerprint -> the user now, or None


@dataclass
class Ticket:
    """What one run of a session's judging area lets the route write: a grade on one of its cards."""

    session_id: str
    store: Store
    corpus: Corpus | None
    query_id: str
    cards: tuple[CandidateView, ...]  # the cards as that run showed them (document, grade, suggestion), in order
    recheck: Recheck
    minted: float = field(default_factory=time.monotonic)


_lock = threading.Lock()
_tickets: dict[str, Ticket] = {}  # digest -> ticket; one per session
_ahead: dict[str, tuple[str, str, int]] = {}  # session id -> (query id, doc id, grade) the route wrote since its last run


def mint(session_id: str, store: Store, corpus: Corpus | None, query_id: str, cards: Sequence[CandidateView],
         recheck: Recheck) -> str:
    """A new ticket for this run of `session_id`'s judging area (the session's earlier one ends)."""
    token = secrets.token_urlsafe(32)
    now = time.monotonic()
    with _lock:
        for digest in [d for d, t in _tickets.items() if t.session_id == session_id or now - t.minted > TICKET_LIFETIME]:
            del _tickets[digest]
        _ahead.pop(session_id, None)  # a grade the route wrote that no click followed: the run shows it anyway
        _tickets[token_digest(token)] = Ticket(session_id, store, corpus, query_id, tuple(cards), recheck)
    return token


def written_ahead(session_id: str, query_id: str, doc_id: str, value: int | None) -> bool:
    """True (once) when the route has just written this grade for the session: the click that follows it
    must not write it again."""
    with _lock:
        if _ahead.get(session_id) != (query_id, doc_id, value):
            return False
        del _ahead[session_id]
        return True


def _take(token: str) -> Ticket | None:
    with _lock:
        ticket = _tickets.pop(token_digest(token), None)
    return ticket if ticket is not None and time.monotonic() - ticket.minted <= TICKET_LIFETIME else None


def routes(base_path: str = "", alive: Callable[[str], bool] | None = None) -> list[Route]:
    """The grade route (st.App(routes=...)), under Streamlit's server.baseUrlPath; `alive(session_id)`
    says whether a browser session is still connected (default: Streamlit's runtime)."""
    base, connected = base_prefix(base_path), alive or _connected

    async def grade(request: Request) -> Response:
        return await _grade(request, connected)

    return [Route(base + GRADE_ROUTE, grade, methods=["POST"])]


def route_literal() -> str:
    """GRADE_ROUTE under this server's base URL path, as a JavaScript string literal."""
    from streamlit import config

    return js_literal(base_prefix(config.get_option("server.baseUrlPath")) + GRADE_ROUTE)


def _connected(session_id: str) -> bool:
    from streamlit.runtime import Runtime

    return Runtime.exists() and Runtime.instance().is_active_session(session_id)


def _parse(body: bytes) -> tuple[str, int, int] | None:
    try:
        obj = json.loads(body)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    token, card, value = obj.get("ticket"), obj.get("card"), obj.get("grade")
    if not isinstance(token, str) or type(card) is not int or type(value) is not int or value not in range(4):
        return None
    return token, card, value


async def _grade(request: Request, connected: Callable[[str], bool]) -> Response:
    refused, body = await checked(request, MAX_BODY)
    if refused is not None:
        return refused
    parsed = _parse(body)
    if parsed is None:
        return answer(400)
    token, card, value = parsed
    ticket = _take(token)
    if ticket is None or not connected(ticket.session_id) or not 0 <= card < len(ticket.cards):
        log.info("grade refused: a ticket used, expired, unknown or of a closed session, or no such card")
        return answer(403)
    fingerprint = acc.client_fingerprint(peer(request), dict(request.headers))
    try:
        written = await run_in_threadpool(_write, ticket, fingerprint, ticket.cards[card], value)
    except LabelerError:
        return answer(409)  # the click says why, on the page
    if not written:
        log.info("grade refused: the session's user is signed out, disabled, or on another client")
        return answer(403)
    return answer(204)


def _write(ticket: Ticket, fingerprint: str, shown: CandidateView, value: int) -> bool:
    me = ticket.recheck(fingerprint)
    if me is None:
        return False
    if shown.grade != value:  # the card as shown: its machine suggestion's first sight is recorded as a click's
        lb.grade(ticket.store, me, ticket.query_id, shown.doc_id, value, ticket.corpus, shown=shown)
    with _lock:
        _ahead[ticket.session_id] = (ticket.query_id, shown.doc_id, value)
    return True
