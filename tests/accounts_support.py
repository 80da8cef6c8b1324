"""Team accounts on real SQLite files, for test_storage_accounts.

argon2 costs ~0.1 s per hash or verify, so the users are created once per test module in a
template database that each test copies (a checkpointed SQLite file is the whole database).
Time is moved by replacing `store.accounts.clock` with a `Clock`.
"""
from __future__ import annotations

import shutil
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from labeler.errors import SignInError
from storage import open_store

PASSWORD = "correct horse battery"
WRONG = "wrong horse battery!"
START = datetime(2026, 12, 1, 9, 0, 0, tzinfo=timezone.utc)
SAME_REFUSAL = "wrong e-mail address or password"


class Clock:
    """A settable clock for `Accounts.clock`."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A database with an admin, an annotator and a viewer who have passwords (hashed once)."""
    path = tmp_path_factory.mktemp("accounts") / "template.db"
    with open_store(path) as store:
        store.accounts.clock = Clock()
        store.accounts.add_user("boss@example.org", "admin", password=PASSWORD, by="(test)")
        store.accounts.add_user("ann@example.org", "annotator", name="Ann", password=PASSWORD, by="boss@example.org")
        store.accounts.add_user("vic@example.org", "viewer", password=PASSWORD)
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file before copying it
    con.close()
    return path


@pytest.fixture
def store(template, tmp_path):
    shutil.copy(template, tmp_path / "l.db")
    s = open_store(tmp_path / "l.db", synchronous="NORMAL")
    s.accounts.clock = Clock()
    yield s
    s.close()


def clock(store) -> Clock:
    return store.accounts.clock


def rows(store, sql: str) -> list[tuple]:
    con = sqlite3.connect(store.engine.url.database)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def dump(store) -> str:
    return "\n".join(sqlite3.connect(store.engine.url.database).iterdump())


def refusal(store, email: str, password: str) -> str:
    with pytest.raises(SignInError) as info:
        store.accounts.sign_in(email, password)
    return str(info.value)
