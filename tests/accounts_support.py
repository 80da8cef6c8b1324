"""Team accounts on real databases (a SQLite file and a PostgreSQL database), for test_storage_accounts.

argon2 costs ~0.1 s per hash or verify, so the users are created once per test module and engine
in a template database that each test copies (a checkpointed SQLite file is the whole database;
on PostgreSQL, CREATE DATABASE ... TEMPLATE). Time is moved by replacing `store.accounts.clock`
with a `Clock`.
"""
from __future__ import annotations

import shutil
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from conftest import rows, snapshot  # noqa: F401 - rows: used by the tests through this module
from labeler.errors import SignInError
from labeler_storage import open_store

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


def _add_users(url: str) -> None:
    """An admin, an annotator and a viewer who have passwords."""
    with open_store(url) as store:
        store.accounts.clock = Clock()
        store.accounts.add_user("boss@example.org", "admin", password=PASSWORD, by="(test)")
        store.accounts.add_user("ann@example.org", "annotator", name="Ann", password=PASSWORD, by="boss@example.org")
        store.accounts.add_user("vic@example.org", "viewer", password=PASSWORD)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """(engine, PostgreSQL server) -> a database with the three users (hashed once per module and engine)."""
    made: dict[str, str] = {}

    def of(engine: str, server=None) -> str:
        if engine not in made:
            if engine == "sqlite":
                path = tmp_path_factory.mktemp("accounts") / "template.db"
                _add_users(f"sqlite:///{path}")
                con = sqlite3.connect(path)
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file before copying it
                con.close()
                made[engine] = str(path)
            else:
                made[engine] = server.create_database()
                _add_users(made[engine])  # closed again: a template must have no connections
        return made[engine]

    return of


@pytest.fixture
def store(request, template, db_engine, tmp_path):
    if db_engine == "sqlite":
        shutil.copy(template("sqlite"), tmp_path / "l.db")
        url = f"sqlite:///{tmp_path / 'l.db'}"
    else:
        server = request.getfixturevalue("postgres_server")
        url = server.create_template(template("postgresql", server))
        request.addfinalizer(lambda: server.drop_database(url))
    s = open_store(url, synchronous="NORMAL")
    s.accounts.clock = Clock()
    yield s
    s.close()


def clock(store) -> Clock:
    return store.accounts.clock


def dump(store) -> str:
    """Every row of the database as text, to look for what must not be stored."""
    return repr(snapshot(store))


def refusal(store, email: str, password: str) -> str:
    with pytest.raises(SignInError) as info:
        store.accounts.sign_in(email, password)
    return str(info.value)
