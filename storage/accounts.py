"""Team accounts: users and their roles, sign-in sessions, throttling, invites (team settings: labeler_storage.team_settings).

One `Accounts` per store (`store.accounts`); each method is one transaction. The roles are
stored here; what each role may do is decided by the app layer (`labeler_app.access`). Passwords and
tokens are hashed by `labeler.passwords`: the database holds no password and no usable token.

Sign-in throttling is per address (known or not, so the answer does not tell which exist): the
first MAX_FAILURES failures within FAILURE_WINDOW cost nothing; each one after them makes the
address wait before its next attempt, 1 s, then 2, 4, ... up to MAX_DELAY, and no password is
checked while it waits. A delay rather than a lock: someone guessing for another's address slows
them down by MAX_DELAY at most, never locks them out (the app also throttles each client, see
labeler_app.throttle). Each attempt is counted (under the write lock) before its password is checked and
uncounted by a success, so parallel attempts cannot each get a guess in. `unlock` and a new
password (set by an admin, or through an invite) clear an address's count.

A session records the digest of the client it signed in from (`client`: address and browser, see
labeler_app.accounts.client_fingerprint). The browser keeps it across reloads in a cookie that a team-server
route sets: the page asks for a one-time code (`new_code`, valid CODE_LIFETIME), the route trades it
(`exchange_code`, once, from the same client only) for a second token of the session, which only the
cookie holds (the tab keeps its own); `session_user(token, client)` reads it back for that client
only. Ending the session (sign-out by either token, expiry, a disable, a new role or password) ends both.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError, SignInError
from labeler.passwords import hash_password, new_token, token_digest, verify_password
from labeler_storage import schema as S
from labeler_storage.clock import database_clock, iso
from labeler_storage.team_settings import check_setting, stored_settings

ROLES = ("admin", "annotator", "viewer")
MAX_FAILURES = 5  # failures that cost no wait
FAILURE_WINDOW = timedelta(minutes=15)  # failures older than this (from the first) are forgotten
MAX_DELAY = timedelta(minutes=1)  # the longest wait an address can be made to keep
INVITE_LIFETIME = timedelta(days=7)
CODE_LIFETIME = timedelta(seconds=60)  # a one-time code for the session cookie (new_code) works this long
_EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]{1,190}")


@dataclass(frozen=True)
class User:
    """A team member as the admin page lists them (no hashes)."""

    email: str
    name: str
    role: str
    disabled: bool
    has_password: bool
    invite_pending: bool
    created_at: str
    created_by: str
    oidc_subject: str | None = None  # "<issuer> <sub>" bound at the first OpenID sign-in


@dataclass(frozen=True)
class Session:
    """A built-in sign-in: the token goes to the browser session; only its digest is stored."""

    token: str
    user: User
    expires_at: str


def normalize_email(email: Any) -> str:
    """Trimmed, lower case; an InputError when it does not look like an address."""
    text = email.strip().lower() if isinstance(email, str) else ""
    if not _EMAIL.fullmatch(text):
        raise InputError(f"not an e-mail address: {str(email)[:80]!r}", hint="use the address people sign in with.")
    return text


def check_role(role: Any) -> str:
    """One of ROLES."""
    if role not in ROLES:
        raise InputError(f"unknown role {str(role)[:40]!r}", hint=f"use one of {', '.join(ROLES)}.")
    return role


def _to_user(row: Any) -> User:
    return User(row.email, row.name, row.role, bool(row.disabled), row.password_hash is not None,
                row.invite_hash is not None, row.created_at, row.created_by, row.oidc_subject)


class Accounts:
    """Users, sessions, throttling and team settings of one database; safe to share between threads."""

    def __init__(self, db: Any) -> None:
        self._db = db

    clock = database_clock("The store's one clock (storage/clock.py): setting it here moves the whole store's time.")

    def _now(self) -> str:
        return iso(self.clock())

    # ---- users

    def add_user(self, email: str, role: str, *, name: str = "", password: str | None = None, by: str = "",
                 oidc_subject: str | None = None) -> User:
        """Add a team member; with a password they can sign in at once (else through OIDC or an invite);
        `oidc_subject` binds the OpenID identity of a first sign-in at once."""
        email, role = normalize_email(email), check_role(role)
        digest = hash_password(password) if password is not None else None
        now = self._now()
        with self._db.write() as conn:
            # ON CONFLICT DO NOTHING: of two adds of one address at once (two first OIDC sign-ins), the
            # second finds the first's row here, also on PostgreSQL, whose writers do not queue.
            added = conn.execute(S.insert_ignore(S.users, conn.dialect.name).values(
                email=email, name=name.strip(), role=role, password_hash=digest, created_at=now, created_by=by,
                updated_at=now, updated_by=by, oidc_subject=oidc_subject).returning(S.users.c.id)).first()
            if added is None:
                raise InputError(f"{email} is already a user", hint="change their role instead.")
            return _to_user(_user_row(conn, email))

    def get_user(self, email: str) -> User | None:
        """The user with this address, or None."""
        with self._db.read() as conn:
            row = _user_row(conn, normalize_email(email))
            return _to_user(row) if row is not None else None

    def user_of_subject(self, oidc_subject: str) -> User | None:
        """The user an OpenID identity ("<issuer> <sub>") is bound to, or None."""
        with self._db.read() as conn:
            row = conn.execute(sa.select(S.users).where(S.users.c.oidc_subject == oidc_subject)).first()
            return _to_user(row) if row is not None else None

    def bind_subject(self, email: str, oidc_subject: str) -> User:
        """Bind an OpenID identity to an account that has none yet; the account as it is now (bound to
        whichever identity won, should two first sign-ins race: the caller compares)."""
        with self._db.write() as conn:
            row = _required_user(conn, email)
            taken = conn.execute(sa.select(S.users.c.id).where(S.users.c.oidc_subject == oidc_subject)).first()
            if row.oidc_subject is None and taken is None:
                conn.execute(S.users.update().where(S.users.c.id == row.id, S.users.c.oidc_subject.is_(None))
                             .values(oidc_subject=oidc_subject, updated_at=self._now(), updated_by="(first sign-in)"))
            return _to_user(_user_row(conn, row.email))

    def list_users(self) -> list[User]:
        """Every user, by address."""
        with self._db.read() as conn:
            return [_to_user(r) for r in conn.execute(sa.select(S.users).order_by(S.users.c.email))]

    def update_user(self, email: str, *, role: str | None = None, disabled: bool | None = None,
                    by: str = "") -> User:
        """Change a user's role or disable them; disabling (or a new role) ends their sessions."""
        values: dict[str, Any] = {}
        if role is not None:
            values["role"] = check_role(role)
        if disabled is not None:
            values["disabled"] = bool(disabled)
        with self._db.write() as conn:
            row = _required_user(conn, email)
            # Only a real change ends sessions: `users set --enable` on an enabled user signs no one out.
            values = {k: v for k, v in values.items() if v != (bool(row.disabled) if k == "disabled" else row.role)}
            if values:
                _guard_last_admin(conn, row, values)
                conn.execute(S.users.update().where(S.users.c.id == row.id)
                             .values(**values, updated_at=self._now(), updated_by=by))
                conn.execute(S.sessions.delete().where(S.sessions.c.user_id == row.id))
            return _to_user(_user_row(conn, row.email))

    def set_password(self, email: str, password: str, *, by: str = "") -> None:
        """Set a user's password (ends their sessions and any pending invite)."""
        digest = hash_password(password)
        with self._db.write() as conn:
            row = _required_user(conn, email)
            conn.execute(S.users.update().where(S.users.c.id == row.id).values(
                password_hash=digest, invite_hash=None, invite_expires_at=None, updated_at=self._now(), updated_by=by))
            conn.execute(S.sessions.delete().where(S.sessions.c.user_id == row.id))
            conn.execute(S.login_failures.delete().where(S.login_failures.c.email == row.email))

    def unlock(self, email: str) -> bool:
        """Forget an address's failed sign-ins (its wait ends now); True when there were any."""
        email = normalize_email(email)
        with self._db.write() as conn:
            return conn.execute(S.login_failures.delete().where(S.login_failures.c.email == email)).rowcount > 0

    def invite(self, email: str, *, by: str = "") -> str:
        """A one-time invite token (valid INVITE_LIFETIME) with which the user sets their password."""
        token = new_token()
        with self._db.write() as conn:
            row = _required_user(conn, email)
            conn.execute(S.users.update().where(S.users.c.id == row.id).values(
                invite_hash=token_digest(token), invite_expires_at=iso(self.clock() + INVITE_LIFETIME),
                updated_at=self._now(), updated_by=by))
        return token

    def invite_email(self, token: str) -> str | None:
        """The address a live invite token is for, or None (used, expired, replaced, disabled)."""
        with self._db.read() as conn:
            row = conn.execute(sa.select(S.users).where(S.users.c.invite_hash == token_digest(str(token)))).first()
        if row is None or row.disabled or (row.invite_expires_at or "") < self._now():
            return None
        return row.email

    def accept_invite(self, token: str, password: str, *, client: str | None = None) -> Session:
        """Set the password of the invite's user, use the invite up, and sign them in."""
        digest = hash_password(password)
        with self._db.write() as conn:
            # Locked: of two uses of one invite at once, the second finds it used.
            row = conn.execute(sa.select(S.users).where(S.users.c.invite_hash == token_digest(str(token)))
                               .with_for_update()).first()
            if row is None or row.disabled or (row.invite_expires_at or "") < self._now():
                raise SignInError("this invite link is not valid (used, expired or replaced)",
                                  hint="ask an admin for a new one: labeler users invite EMAIL.")
            conn.execute(S.users.update().where(S.users.c.id == row.id).values(
                password_hash=digest, invite_hash=None, invite_expires_at=None, updated_at=self._now(),
                updated_by=row.email))
            # An invite doubles as a password reset: sessions signed in with the old password end, and
            # the failures counted against the address are forgotten.
            conn.execute(S.sessions.delete().where(S.sessions.c.user_id == row.id))
            conn.execute(S.login_failures.delete().where(S.login_failures.c.email == row.email))
            return self._new_session(conn, row, client)

    # ---- sign-in and sessions

    def sign_in(self, email: str, password: str, *, client: str | None = None,
                check_with: Callable[[Callable[[], bool]], bool] = lambda check: check()) -> Session:
        """A session for the right password; a SignInError (the same for any wrong address or password),
        or, after MAX_FAILURES, a throttled refusal that checks nothing until the address's wait ends.
        `check_with(check)` runs the password check (the app queues it: labeler_app.throttle.HashGate)."""
        try:
            email = normalize_email(email)
        except InputError:
            raise SignInError("wrong e-mail address or password") from None
        with self._db.write() as conn:  # committed before the password is checked
            locked = self._count_attempt(conn, email)
            row = _user_row(conn, email)
        if locked:
            raise SignInError("too many failed sign-ins for this address",
                              hint=f"try again after {locked.replace('T', ' ').rstrip('Z')} UTC (at most a minute); "
                                   "an admin can lift it at once: labeler users unlock EMAIL.")
        ok = check_with(lambda: verify_password(row.password_hash if row is not None else None, password))
        if not ok or row is None or row.disabled:
            raise SignInError("wrong e-mail address or password")  # the attempt is already counted
        with self._db.write() as conn:
            current = conn.execute(sa.select(S.users).where(S.users.c.id == row.id)).first()
            if current is None or current.disabled or current.password_hash != row.password_hash:
                raise SignInError("wrong e-mail address or password")  # disabled or reset while checking
            conn.execute(S.login_failures.delete().where(S.login_failures.c.email == email))
            return self._new_session(conn, current, client)

    def _count_attempt(self, conn: Connection, email: str) -> str | None:
        """Count a sign-in attempt as a failure before its password is checked (a success removes the
        count); the end of the wait instead while the address waits (the attempt is then not counted)."""
        f, now = S.login_failures, self.clock()
        window_start, at = iso(now - FAILURE_WINDOW), iso(now)
        # Tidy up: addresses tried long ago and not locked (an address sprayer must not grow the table).
        conn.execute(f.delete().where(f.c.first_at < window_start,
                                      sa.or_(f.c.locked_until.is_(None), f.c.locked_until < at)))
        # ON CONFLICT DO NOTHING: the first attempt at an address creates its row, and two at once do not
        # fail on the primary key (PostgreSQL has no BEGIN IMMEDIATE to queue them).
        conn.execute(S.insert_ignore(f, conn.dialect.name).values(email=email, failures=0, first_at=at))
        row = conn.execute(sa.select(f).where(f.c.email == email).with_for_update()).one()
        if row.locked_until and row.locked_until > at:
            return row.locked_until
        failures, first = (1, at) if row.first_at < window_start else (row.failures + 1, row.first_at)
        locked = iso(now + wait_after(failures)) if failures >= MAX_FAILURES else None
        conn.execute(f.update().where(f.c.email == email).values(failures=failures, first_at=first,
                                                                 locked_until=locked))
        return None

    def _new_session(self, conn: Connection, row: Any, client: str | None) -> Session:
        hours = float(stored_settings(conn)["session_hours"])
        token, now = new_token(), self.clock()
        expires = iso(now + timedelta(hours=hours))
        conn.execute(S.sessions.delete().where(S.sessions.c.expires_at < iso(now)))  # tidy up
        conn.execute(S.sessions.insert().values(token_hash=token_digest(token), user_id=row.id,
                                                created_at=iso(now), expires_at=expires,
                                                client_hash=token_digest(client) if client is not None else None))
        return Session(token, _to_user(row), expires)

    def session_user(self, token: str | None, client: str | None = None) -> User | None:
        """The user of a live session (re-read every time, so a new role or a disable applies at once);
        with `client`, by its cookie's token and only for the client that signed in."""
        if not token:
            return None
        s, u, digest = S.sessions, S.users, token_digest(token)
        live = [s.c.expires_at > self._now(), u.c.disabled == sa.false()]
        if client is None:  # the tab's token, or the cookie's once a tab took it up
            live.append(sa.or_(s.c.token_hash == digest, s.c.cookie_hash == digest))
        else:  # a cookie's token, from the client that signed in
            live += [s.c.cookie_hash == digest, s.c.client_hash == token_digest(client)]
        with self._db.read() as conn:
            row = conn.execute(sa.select(u).join(s, s.c.user_id == u.c.id).where(*live)).first()
            return _to_user(row) if row is not None else None

    def new_code(self, token: str) -> str | None:
        """A one-time code that `exchange_code` trades for this live session (valid CODE_LIFETIME; it
        replaces the session's last code); None for a session that has ended. Only its digest is stored."""
        code, s = new_token(), S.sessions
        with self._db.write() as conn:
            minted = conn.execute(s.update().where(s.c.token_hash == token_digest(str(token)),
                                                   s.c.expires_at > self._now()).values(
                code_hash=token_digest(code), code_expires_at=iso(self.clock() + CODE_LIFETIME))).rowcount
        return code if minted else None

    def exchange_code(self, code: str, client: str) -> Session | None:
        """The session a code was minted for, with a new token for the cookie (replacing its last one; the
        tab's token still works); the code is used up by any attempt. None for a code unknown, used,
        expired, or brought by another client than the session signed in from, and for a session that
        has ended or whose user is disabled."""
        s, u = S.sessions, S.users
        with self._db.write() as conn:
            # Locked: of two exchanges of one code at once, the second finds it used (PostgreSQL re-reads
            # the row the first changed and finds it no longer matches).
            row = conn.execute(sa.select(s).where(s.c.code_hash == token_digest(str(code))).with_for_update()).first()
            if row is None:
                return None
            used_up = {"code_hash": None, "code_expires_at": None}
            conn.execute(s.update().where(s.c.token_hash == row.token_hash).values(**used_up))
            user = conn.execute(sa.select(u).where(u.c.id == row.user_id)).one()
            now = self._now()
            if (row.code_expires_at < now or row.expires_at <= now or user.disabled
                    or row.client_hash != token_digest(str(client))):
                return None
            token = new_token()
            conn.execute(s.update().where(s.c.token_hash == row.token_hash).values(cookie_hash=token_digest(token)))
            return Session(token, _to_user(user), row.expires_at)

    def sign_out(self, token: str | None) -> None:
        """End a session, by either of its tokens (the tab's or the cookie's; nothing happens for an unknown one)."""
        if token:
            s, digest = S.sessions, token_digest(token)
            with self._db.write() as conn:
                conn.execute(s.delete().where(sa.or_(s.c.token_hash == digest, s.c.cookie_hash == digest)))

    # ---- team settings

    def settings(self) -> dict[str, Any]:
        """Every team setting (defaults filled in)."""
        with self._db.read() as conn:
            return stored_settings(conn)

    def set_setting(self, key: str, value: Any, *, by: str = "") -> None:
        """Change one team setting (checked: known key, sensible value)."""
        value = check_setting(key, value)
        t = S.team_settings
        with self._db.write() as conn:
            stmt = S.dialect_insert(conn.dialect.name)(t).values(key=key, value=value, updated_at=self._now(),
                                                                 updated_by=by)
            conn.execute(stmt.on_conflict_do_update(index_elements=[t.c.key], set_={
                "value": stmt.excluded.value, "updated_at": stmt.excluded.updated_at,
                "updated_by": stmt.excluded.updated_by}))


def wait_after(failures: int) -> timedelta:
    """How long an address waits after its `failures`-th failure (from the MAX_FAILURES-th on): 1 s,
    doubling with each further failure, at most MAX_DELAY."""
    return min(timedelta(seconds=2 ** min(failures - MAX_FAILURES, 16)), MAX_DELAY)


def _user_row(conn: Connection, email: str) -> Any:
    return conn.execute(sa.select(S.users).where(S.users.c.email == email)).first()


def _required_user(conn: Connection, email: str) -> Any:
    email = normalize_email(email)
    row = _user_row(conn, email)
    if row is None:
        raise InputError(f"no user {email}", hint="add them first: labeler users add EMAIL --role ROLE.")
    return row


def _guard_last_admin(conn: Connection, row: Any, values: Mapping[str, Any]) -> None:
    # A team without an enabled admin could not be managed from the app any more.
    demoted = row.role == "admin" and (values.get("role", "admin") != "admin" or values.get("disabled"))
    if not demoted:
        return
    u = S.users
    # The admins' rows locked: two admins stepping down at once cannot both count the other.
    admins = conn.execute(sa.select(u.c.id).where(u.c.role == "admin", u.c.disabled == sa.false())
                          .with_for_update()).scalars().all()
    if not set(admins) - {row.id}:
        raise InputError(f"{row.email} is the last admin", hint="make someone else admin first.")
