"""Team mode: who is signed in (built-in accounts or OpenID Connect), and managing the team.

Sign-in gives the page an `Actor` (labeler_app.access); every later action takes it. A built-in
session is a token held in the browser session and checked against the database on every
rerun, so an expired session, a disabled user or a changed role applies at the next click.
It survives a reload through a cookie: the page mints a one-time code (`cookie_code`) that the
team server's route trades (`exchange_code`) for a second token of the session, set as an
HttpOnly cookie; a new browser session resumes it (`resume` with the client's fingerprint).
An OpenID Connect user (Streamlit's `st.login`) is matched by the identity bound to an account
at its first sign-in, else by a verified e-mail address (see `oidc_actor`); one not on the list
gets the team's `oidc_default_role`, or is refused when that is "none" (the default). Managing users and team settings needs the admin role.
"""
from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from labeler.errors import AccessDenied, InputError, SignInError
from labeler.passwords import invite_link
from labeler_app.access import Actor, Can, Role
from labeler_app.throttle import CheckBusy, ClientThrottle, HashGate, client_key
from labeler_storage import Store
from labeler_storage.accounts import User

TEAM_ENV = "LABELER_TEAM"  # set by `labeler app --team`
log = logging.getLogger("labeler.accounts")


def team_mode() -> bool:
    """True in a team deployment (`labeler app --team`): sign-in required, roles enforced."""
    return os.environ.get(TEAM_ENV, "").strip().lower() in ("1", "true", "yes")


def actor_of(user: User) -> Actor:
    """The actor of a signed-in user."""
    return Actor(user.email, Role(user.role), team=True)


@dataclass(frozen=True)
class SignedIn:
    """A built-in sign-in: the session token to keep in the browser session, and who it is."""

    token: str
    actor: Actor
    expires_at: str


CLIENTS = ClientThrottle()  # this process's count of failed sign-ins per client (labeler_app.throttle)
CHECKS = HashGate()  # this process's password checks: bounded, fewest recent failures first (labeler_app.throttle)


def client_fingerprint(peer: str | None, headers: Mapping[str, str]) -> str:
    """The client and browser a request comes from (address as labeler_app.throttle.client_key sees it, and the
    User-Agent): a session is bound to the one it signed in from."""
    agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
    return f"{client_key(peer, dict(headers))} {agent}"


def sign_in(store: Store, email: str, password: str, *, client: str = "loopback",
            fingerprint: str | None = None) -> SignedIn:
    """Check a password (throttled per client, then per address, after repeated failures, and queued
    behind clients with fewer failures); a new session, bound to `fingerprint` (see client_fingerprint)
    when given."""
    wait = CLIENTS.wait(client)
    if wait:
        raise SignInError("too many failed sign-ins from your network address",
                          hint=f"wait {math.ceil(wait)} s, then try again.")
    try:
        session = store.accounts.sign_in(email, password, client=fingerprint,
                                         check_with=lambda check: CHECKS.check(CLIENTS.failures(client), check))
    except CheckBusy:
        raise
    except SignInError:
        CLIENTS.failed(client)
        raise
    return SignedIn(session.token, actor_of(session.user), session.expires_at)


def accept_invite(store: Store, token: str, password: str, repeated: str, *,
                  fingerprint: str | None = None) -> SignedIn:
    """Set a password from a one-time invite link, and sign in (bound to `fingerprint` when given)."""
    if password != repeated:
        raise InputError("the two passwords differ", hint="type the same password twice.")
    session = store.accounts.accept_invite(token, password, client=fingerprint)
    return SignedIn(session.token, actor_of(session.user), session.expires_at)


def invite_email(store: Store, token: str) -> str:
    """The address an invite link is for; a SignInError when it is used, expired or replaced."""
    email = store.accounts.invite_email(token)
    if email is None:
        raise SignInError("this invite link is not valid (used, expired or replaced)",
                          hint="ask an admin for a new one.")
    return email


def resume(store: Store, token: str | None, fingerprint: str | None = None) -> Actor | None:
    """The actor of a live built-in session, or None (expired, signed out, disabled); with `fingerprint`
    (a token read from the cookie), only of a session signed in from that client."""
    user = store.accounts.session_user(token, fingerprint)
    return actor_of(user) if user is not None else None


def cookie_code(store: Store, token: str) -> str | None:
    """A one-time code (valid a minute) with which this browser fetches the session's cookie; None when the
    session has ended."""
    return store.accounts.new_code(token)


def exchange_code(store: Store, code: str, fingerprint: str) -> tuple[str, int] | None:
    """The cookie for the session a code was minted for: its own token and the seconds it has left; None
    for a code used, expired or unknown, brought from another client than the one that signed in, or
    whose session ended."""
    session = store.accounts.exchange_code(code, fingerprint)
    if session is None:
        return None
    ends = datetime.strptime(session.expires_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return session.token, max(0, int((ends - store.accounts.clock()).total_seconds()))


def sign_out(store: Store, token: str | None) -> None:
    """End a built-in session."""
    store.accounts.sign_out(token)


OIDC_CLAIMS = ("iss", "sub", "email", "email_verified", "name")


def oidc_claims(user: Mapping[str, Any]) -> dict[str, Any]:
    """The ID-token claims a sign-in rests on, taken from `st.user` (or any mapping of claims)."""
    return {k: user.get(k) for k in OIDC_CLAIMS}


def oidc_actor(store: Store, claims: Mapping[str, Any]) -> Actor:
    """The actor of an OpenID Connect sign-in (`claims`: the ID token's, see `oidc_claims`).

    An identity (issuer and `sub`) already bound to an account is that account. Otherwise the
    address must be verified by the provider (`email_verified` true), and an account of that
    address already bound to another identity is refused: an address alone never maps a stranger
    to an account. The first sign-in binds the identity; an unlisted address gets the team's
    `oidc_default_role`, or is refused when that is "none" (the default)."""
    email, sub = claims.get("email"), claims.get("sub")
    if not sub:
        raise SignInError("the identity provider sent no subject (`sub`)", hint="ask your admin to check the provider.")
    subject = f"{claims.get('iss') or ''} {sub}"
    user = store.accounts.user_of_subject(subject)
    if user is None:
        user = _first_sign_in(store, subject, email, claims)
    if user.disabled:
        raise AccessDenied(f"{user.email} is disabled on this team.", hint="ask an admin.")
    return actor_of(user)


def _first_sign_in(store: Store, subject: str, email: Any, claims: Mapping[str, Any]) -> User:
    """The account an identity not bound yet signs in to, bound to it now; refused unless its address is verified."""
    if not email:
        raise SignInError("the identity provider sent no e-mail address",
                          hint="ask your admin to release the `email` claim (scope `openid email`).")
    address = str(email).strip().lower()
    verified = claims.get("email_verified")
    if verified is not True and str(verified).lower() != "true":  # some providers send the string "true"
        log.warning("OpenID sign-in refused: %s is not verified by the provider (subject %s)", address, subject)
        raise SignInError(f"your identity provider has not verified the address {address}",
                          hint="verify it with your provider (or ask its admin), then sign in again.")
    user = store.accounts.get_user(address)
    if user is None:
        default = store.accounts.settings()["oidc_default_role"]
        if default == "none":
            raise AccessDenied(f"{address} is not on this team.",
                               hint="ask an admin to add you: labeler users add EMAIL --role annotator.")
        try:
            return store.accounts.add_user(address, default, name=claims.get("name") or "", by="(first sign-in)",
                                           oidc_subject=subject)
        except InputError:  # a simultaneous first sign-in (another tab) added them a moment ago
            user = store.accounts.get_user(address)
            if user is None:
                raise
    if user.oidc_subject is None:
        user = store.accounts.bind_subject(user.email, subject)
    if user.oidc_subject != subject:
        log.warning("OpenID sign-in refused: %s is bound to another identity than %s", user.email, subject)
        raise AccessDenied(f"{user.email} already signs in with another account of your identity provider.",
                           hint="sign in with that account, or ask an admin to check who holds this address.")
    return user


# --------------------------------------------------------------------------- managing the team


def users(store: Store, actor: Actor) -> list[dict[str, Any]]:
    """The team as a table (admins only)."""
    actor.require(Can.MANAGE_USERS)
    return [{"email": u.email, "name": u.name, "role": u.role, "disabled": u.disabled,
             "sign-in": "password" if u.has_password else ("invite sent" if u.invite_pending else "OIDC"),
             "added": u.created_at, "added by": u.created_by} for u in store.accounts.list_users()]


def add_user(store: Store, actor: Actor, email: str, role: str, *, name: str = "") -> str:
    """Add a team member with a one-time invite (admins only); the invite link."""
    actor.require(Can.MANAGE_USERS)
    user = store.accounts.add_user(email, role, name=name, by=actor.name)
    return invite_link(store.accounts.invite(user.email, by=actor.name))


def reinvite(store: Store, actor: Actor, email: str) -> str:
    """A new invite link for a user (the old one stops working); admins only."""
    actor.require(Can.MANAGE_USERS)
    return invite_link(store.accounts.invite(email, by=actor.name))


def update_user(store: Store, actor: Actor, email: str, *, role: str | None = None,
                disabled: bool | None = None) -> None:
    """Change a user's role or disable them (admins only; the last admin cannot be demoted)."""
    actor.require(Can.MANAGE_USERS)
    store.accounts.update_user(email, role=role, disabled=disabled, by=actor.name)


def team_settings(store: Store) -> dict[str, Any]:
    """The team settings (anyone signed in may read them)."""
    return store.accounts.settings()


def set_team_setting(store: Store, actor: Actor, key: str, value: Any) -> None:
    """Change one team setting (admins only)."""
    actor.require(Can.TEAM_SETTINGS)
    store.accounts.set_setting(key, value, by=actor.name)


SETTING_HELP = {"session_hours": "How long a built-in sign-in lasts (hours).",
                "oidc_default_role": "Role of someone who signs in through the identity provider but is not "
                                     "in the user list; \"none\" refuses them."}
