"""Time in the database: one clock per Store, injected, and one way to write it.

Every timestamp the storage layer writes (questions, judgments and their history, votes, runs,
corpus versions, accounts, sessions, the work queue's leases) comes from the Store's `clock` and
is written by `iso`. A repository function reads the clock through the transaction the store
opened (`now_iso(conn)`), so tests move time by setting `store.clock`, not by patching a module.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from sqlalchemy.engine import Connection

Clock = Callable[[], datetime]
CLOCK_KEY = "labeler_clock"  # where a transaction's connection holds the store's clock (Connection.info)


def system_clock() -> datetime:
    """The real time, UTC."""
    return datetime.now(timezone.utc)


def iso(at: datetime) -> str:
    """An aware datetime as the schema's ISO 8601 UTC string, second precision (2026-12-01T09:00:00Z)."""
    return at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso(conn: Connection) -> str:
    """The store's clock now, read through the transaction `conn` (the real time outside a store's)."""
    return iso(conn.info.get(CLOCK_KEY, system_clock)())


def database_clock(doc: str) -> property:
    """A `clock` property of an object holding the Database as `_db`: reading or setting it reads or
    sets the one clock of that database's store (the Store and its Accounts share it)."""
    def get(self: Any) -> Clock:
        return self._db.clock

    def set_(self: Any, clock: Clock) -> None:
        self._db.clock = clock

    return property(get, set_, doc=doc)
