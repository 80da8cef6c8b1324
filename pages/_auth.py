"""Who is using the app: the local annotator name, or in team mode a sign-in (built-in account
or OpenID Connect via `st.login`) checked on every rerun. The entry script calls `identify()`
before any page runs; pages read the result with `pages._common.actor()`. A built-in sign-in
survives a reload through an HttpOnly cookie that a team-server route sets (pages/_session_cookie.py)."""
from __future__ import annotations

import logging
from collections.abc import Callable

import streamlit as st

from labeler.errors import LabelerError
from labeler_app import accounts as acc
from labeler_app.access import Actor, Can, local_actor
from labeler_app.text import inert_code
from labeler_app.throttle import client_key
from labeler_pages._common import Keys, said, show_flash
from labeler_pages._pages import PAGES
from labeler_pages._session_cookie import clear_cookie, cookie_token, fetch_cookie
from labeler_pages._uploads import allow_uploads
from labeler_pages._visitors import mark_signed_in

TOKEN = "_session_token"
FROM = "_signed_in_from"  # the client and browser that signed in (see _fingerprint)
DEAD_COOKIE = "_cookie_refused"  # the cookie's token, once it was found not to be a live session of this client
GO = "_cookie_request"  # ("session", code) after a sign-in, ("sign-out", None) after a sign-out: for the next run
log = logging.getLogger("labeler.accounts")
SPELLING = "_annotator_spelling"  # (name as typed, the spelling it resolved to)


def oidc_configured() -> bool:
    """True when `.streamlit/secrets.toml` (or STREAMLIT_SECRETS_FILES) has an [auth] section for st.login."""
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets file at all is the common case
        return False


def identify(store) -> Actor:
    """The actor of this rerun; in team mode shows the sign-in screen and stops until there is one."""
    if not acc.team_mode():
        with st.sidebar:
            # Bound to the URL (?annotator=...): it survives a reload and page switches, unlike session state.
            st.text_input("Annotator", key=Keys.ANNOTATOR, bind="query-params", placeholder="your name",
                          help="Every grade you give is saved under this name.")
        return local_actor(_spelling(store, st.session_state.get(Keys.ANNOTATOR) or ""))
    actor = _team_actor(store)  # stops, as _signed_out, unless signed in
    mark_signed_in(True)
    allow_uploads(actor.can(Can.OPEN_CORPUS) or actor.can(Can.IMPORT_GOLDEN))
    st.session_state[Keys.RECHECK] = lambda: _fresh_actor(store)
    if st.session_state.get(GO, (None,))[0] == "session":
        fetch_cookie(st.session_state.pop(GO)[1])  # the cookie, so that a reload keeps this sign-in
    with st.sidebar:
        st.caption(f"Signed in as {inert_code(actor.name)} · {actor.role.value}")
        st.button("Sign out", key="sign-out", on_click=_sign_out, args=(store,))
    return actor


def _spelling(store, typed: str) -> str:
    """The spelling in use for the typed name, looked up once per name typed (the lookup reads every
    annotator's name; a rerun must not cost the size of the collection)."""
    if not typed.strip():
        return ""
    known = st.session_state.get(SPELLING)
    if known is None or known[0] != typed:
        known = st.session_state[SPELLING] = (typed, store.judgments.annotator_spelling(typed))
    return known[1]


def _team_actor(store) -> Actor:
    invite = st.query_params.get("invite")
    if invite:
        _invite_form(store, invite)
    token = st.session_state.get(TOKEN)
    if token and st.session_state.get(FROM) != _fingerprint():
        # Streamlit lets a websocket reattach to a session by its id (which upload URLs show): a session
        # signed in from one client and now driven from another is ended, for both.
        log.warning("signed-in session reattached from another client: signed out (%s)", _client())
        acc.sign_out(store, token)
    if token:
        actor = acc.resume(store, token)
        if actor is not None:
            return actor
        st.session_state.pop(TOKEN, None)
        st.warning("Your session has ended (expired, signed out, or your account changed): sign in again. "
                   "A click made since was not saved.")
    elif (cookie := cookie_token()) is not None and cookie != st.session_state.get(DEAD_COOKIE):
        # A reload (a new browser session): the cookie's session, if live and from this client. One that is
        # not is looked up once per browser session (the cookie a connection brought does not change).
        actor = acc.resume(store, cookie, _fingerprint())
        if actor is not None:
            _keep(cookie)
            return actor
        st.session_state[DEAD_COOKIE] = cookie
    if oidc_configured() and st.user.is_logged_in:
        try:
            return acc.oidc_actor(store, acc.oidc_claims(st.user))
        except LabelerError as exc:
            _signed_out()
            st.title("Golden Set Labeler", anchor=False)
            st.error(said(exc))
            st.button("Use another account", key="oidc-refused-sign-out", on_click=st.logout)
            st.stop()
    _signed_out()
    if st.session_state.get(GO, (None,))[0] == "sign-out":
        st.session_state.pop(GO)
        clear_cookie()  # so that a reload does not sign in again
    show_flash()  # e.g. "your session has ended" from an action refused since the last run
    _sign_in_screen(store)
    st.stop()
    raise AssertionError("unreachable")  # st.stop raises


def _signed_out() -> None:
    """This browser session is not signed in: no uploads (pages/_uploads.py), its websocket paced
    (pages/_visitors.py), no page navigation. Only decided here, once the run knows: marked out at the
    start of every run, a signed-in session's messages arriving meanwhile were paced as a visitor's."""
    allow_uploads(False)
    mark_signed_in(False)
    _hide_navigation()


def _hide_navigation() -> None:
    # Signed out, the sidebar must not keep listing the pages of the last run. Every page's URL is
    # there, hidden and empty, so a link to one shows the sign-in form (not "Page not found") and
    # the rerun after sign-in opens that page.
    st.navigation([st.Page(_nothing, title=spec.title, url_path=spec.url_path, default=i == 0)
                   for i, spec in enumerate(PAGES)], position="hidden")


def _nothing() -> None:
    """The only page there is before sign-in (the entry script draws the sign-in screen)."""


def _fresh_actor(store) -> Actor | None:
    """Re-read the signed-in user before an action (a callback runs before the page, with the last run's actor)."""
    token = st.session_state.get(TOKEN)
    if token:  # driven from another client than the one that signed in: the page run ends it
        return acc.resume(store, token) if st.session_state.get(FROM) == _fingerprint() else None
    if oidc_configured() and st.user.is_logged_in:
        try:
            return acc.oidc_actor(store, acc.oidc_claims(st.user))
        except LabelerError:
            return None
    return None


def route_recheck(store, actor: Actor) -> Callable[[str], Actor | None]:
    """How a request outside this session's runs (pages/_grade_route.py) re-checks who it acts as: given
    the request's client fingerprint, the actor as the database has them now, or None (signed out,
    disabled, another client). Local mode has no accounts: this run's `actor`."""
    if not acc.team_mode():
        return lambda fingerprint: actor
    token, signed_from, here = st.session_state.get(TOKEN), st.session_state.get(FROM), _fingerprint()
    claims = acc.oidc_claims(st.user) if not token and oidc_configured() and st.user.is_logged_in else None

    def recheck(fingerprint: str) -> Actor | None:
        if fingerprint != here:
            return None
        if token:
            return acc.resume(store, token) if signed_from == here else None
        if claims is None:
            return None
        try:
            return acc.oidc_actor(store, claims)
        except LabelerError:
            return None

    return recheck


def _sign_in_screen(store) -> None:
    _, middle, _ = st.columns([1, 2, 1])
    with middle:
        _sign_in_form(store)


def _sign_in_form(store) -> None:
    st.title("Golden Set Labeler", anchor=False)
    st.caption("This is a team server: sign in to continue.")
    if oidc_configured():
        st.button("Sign in with your organisation's account", key="oidc-sign-in", type="primary", on_click=st.login)
        st.caption("Or, with an account made on this server:")
    with st.form("sign-in", border=True):
        email = st.text_input("E-mail", key="sign_in_email", autocomplete="username")
        password = st.text_input("Password", type="password", key="sign_in_password", autocomplete="current-password")
        if st.form_submit_button("Sign in", type="primary" if not oidc_configured() else "secondary"):
            try:
                signed = acc.sign_in(store, email, password, client=_client(), fingerprint=_fingerprint())
            except LabelerError as exc:
                st.error(said(exc))
                return
            _keep(signed.token, acc.cookie_code(store, signed.token))
            st.rerun()


def _keep(token: str, code: str | None = None) -> None:
    """Hold a built-in sign-in in this browser session, bound to the client that signed in; with `code`
    (a new sign-in), the next run has the browser fetch the cookie that keeps it across reloads."""
    st.session_state[TOKEN], st.session_state[FROM] = token, _fingerprint()
    if code:
        st.session_state[GO] = ("session", code)


def _fingerprint() -> str:
    """The client and browser a sign-in came from (see `_team_actor`)."""
    peer = st.context.ip_address
    return acc.client_fingerprint(peer if isinstance(peer, str) else None, dict(st.context.headers))


def _client() -> str:
    """The client a sign-in comes from (labeler_app.throttle.client_key); Streamlit gives no address for loopback
    (and AppTest, which has no connection, a stand-in object: no address either)."""
    peer = st.context.ip_address
    return client_key(peer if isinstance(peer, str) else None, dict(st.context.headers))


def _invite_form(store, token: str) -> None:
    _hide_navigation()
    st.title("Set your password", anchor=False)
    try:
        email = acc.invite_email(store, token)
    except LabelerError as exc:
        st.error(said(exc))
        st.stop()
    st.caption(f"For {inert_code(email)}.")
    with st.form("accept-invite", border=True):
        password = st.text_input("New password (10 characters or more)", type="password", key="invite_password",
                                 autocomplete="new-password")
        repeated = st.text_input("The same again", type="password", key="invite_repeat", autocomplete="new-password")
        if st.form_submit_button("Set password and sign in", type="primary"):
            try:
                signed = acc.accept_invite(store, token, password, repeated, fingerprint=_fingerprint())
            except LabelerError as exc:
                st.error(said(exc))
                st.stop()
            _keep(signed.token, acc.cookie_code(store, signed.token))
            del st.query_params["invite"]
            st.rerun()
    st.stop()


def _sign_out(store) -> None:
    token = st.session_state.pop(TOKEN, None)
    acc.sign_out(store, token)
    if token:
        st.session_state[GO] = ("sign-out", None)
    if oidc_configured() and st.user.is_logged_in:
        st.logout()
