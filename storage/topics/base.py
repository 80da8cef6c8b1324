"""What every sub-facade of a Store shares: the store's database (its transactions and its one clock)
and the store itself (its question-index cache, and the other topics a method combines)."""
from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from labeler_storage.engine import Database
    from labeler_storage.store import Store


class Topic:
    """One topic of a Store; safe to share between threads, as the Store is."""

    def __init__(self, store: "Store") -> None:
        self._store = store
        self._db: Database = store._db

    def __repr__(self) -> str:
        return f"{self._store!r}.{type(self).__name__.lower()}"

    def _now(self) -> datetime:
        """The store's clock (tests set `store.clock`)."""
        return self._db.clock()
