"""Passwords and one-time tokens for built-in accounts.

Passwords are hashed with argon2id (argon2-cffi's defaults: 64 MiB, 3 passes), so a stolen
database does not give the passwords away; tokens (sessions, invites) are random 256-bit
strings of which only a SHA-256 digest is stored, so the database never holds a usable one.
"""
from __future__ import annotations

import functools
import hashlib
import os
import secrets
import urllib.parse

from labeler.errors import InputError

MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # argon2 takes any length; this only stops a megabyte "password"


def _hasher():
    from argon2 import PasswordHasher  # imported on use: the scoring CLI starts without it

    return PasswordHasher()


def check_password_rules(password: str) -> None:
    """Refuse a password that is too short, too long or blank."""
    if not isinstance(password, str) or len(password.strip()) < MIN_PASSWORD:
        raise InputError(f"a password needs at least {MIN_PASSWORD} characters",
                         hint="use a longer passphrase, e.g. four unrelated words.")
    if len(password) > MAX_PASSWORD:
        raise InputError(f"a password may have at most {MAX_PASSWORD} characters", hint="use a shorter one.")
    if not _encodable(password):
        raise InputError("the password holds bytes that are not text (a terminal not set to UTF-8?)",
                         hint="type it again in a UTF-8 terminal, or use other characters.")


def _encodable(password: str) -> bool:
    # argon2 hashes UTF-8 bytes; a lone surrogate (undecodable terminal input) has none.
    try:
        password.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def hash_password(password: str) -> str:
    """An argon2id hash of a password that follows the rules."""
    check_password_rules(password)
    return _hasher().hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when `password` matches; with no hash, a dummy verify of equal cost, then False (no timing oracle)."""
    from argon2.exceptions import InvalidHashError, VerificationError

    if not isinstance(password, str) or len(password) > MAX_PASSWORD or not _encodable(password):
        return False
    hasher = _hasher()
    try:
        return hasher.verify(password_hash or _dummy_hash(), password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


@functools.cache
def _dummy_hash() -> str:
    return _hasher().hash(secrets.token_hex(16))


PUBLIC_URL_ENV = "LABELER_PUBLIC_URL"  # where invite links point


def invite_link(token: str) -> str:
    """The link that opens the set-your-password form ($LABELER_PUBLIC_URL, else the local address)."""
    base = os.environ.get(PUBLIC_URL_ENV, "").strip().rstrip("/") or "http://127.0.0.1:8501"
    return f"{base}/?invite={urllib.parse.quote(token)}"


def new_token() -> str:
    """A random URL-safe token (256 bits)."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """What the database keeps of a token."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
