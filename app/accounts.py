"""Team mode: who is signed in (built-in accounts or OpenID Connect), and managing the team.

Sign-in gives the page an `Actor` (app.access); every later action takes it. A built-in
session is a token held in the browser session and checked against the database on every
rerun, so an expired session, a disabled user or a changed role applies at the next click.
An OpenID Connect user (Streamlit's `st.login`) is matched by e-mail address to the users
table; one not on the list gets the team's `oidc_default_role`, or is refused when that is
"none" (the default). Managing users and team settings needs the admin role.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from app.access import Actor, Can, Role
from labeler.errors import AccessDenied, InputError, SignInError
from labeler.passwords import invite_link
from storage import Store
from storage.accounts import User

TEAM_ENV = "LABELER_TEAM"  # set by `labeler app --team`


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


def sign_in(store: Store, email: str, password: str) -> SignedIn:
    """Check a password (throttled after repeated failures); a new session."""
    session = store.accounts.sign_in(email, password)
    return SignedIn(session.token, actor_of(session.user), session.expires_at)


def accept_invite(store: Store, token: str, password: str, repeated: str) -> SignedIn:
    """Set a password from a one-time invite link, and sign in."""
    if password != repeated:
        raise InputError("the two passwords differ", hint="type the same password twice.")
    session = store.accounts.accept_invite(token, password)
    return SignedIn(session.token, actor_of(session.user), session.expires_at)


def invite_email(store: Store, token: str) -> str:
    """The address an invite link is for; a SignInError when it is used, expired or replaced."""
    email = store.accounts.invite_email(token)
    if email is None:
        raise SignInError("this invite link is not valid (used, expired or replaced)",
                          hint="ask an admin for a new one.")
    return email


def resume(store: Store, token: str | None) -> Actor | None:
    """The actor of a live built-in session, or None (expired, signed out, disabled)."""
    user = store.accounts.session_user(token)
    return actor_of(user) if user is not None else None


def sign_out(store: Store, token: str | None) -> None:
    """End a built-in session."""
    store.accounts.sign_out(token)


def oidc_actor(store: Store, email: str | None, name: str | None = None) -> Actor:
    """The actor of an OpenID Connect sign-in: the listed user's role, else the team default, else refused."""
    if not email:
        raise SignInError("the identity provider sent no e-mail address",
                          hint="ask your admin to release the `email` claim (scope `openid email`).")
    user = store.accounts.get_user(email)
    if user is None:
        default = store.accounts.settings()["oidc_default_role"]
        if default == "none":
            raise AccessDenied(f"{email.strip().lower()} is not on this team.",
                               hint="ask an admin to add you: labeler users add EMAIL --role annotator.")
        try:
            user = store.accounts.add_user(email, default, name=name or "", by="(first sign-in)")
        except InputError:  # a simultaneous first sign-in (another tab) added them a moment ago
            user = store.accounts.get_user(email)
            if user is None:
                raise
    if user.disabled:
        raise AccessDenied(f"{user.email} is disabled on this team.", hint="ask an admin.")
    return actor_of(user)


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
