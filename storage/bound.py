"""A Store bound to one collection: what the app passes around once the user picked a collection.

Every Store method that takes `collection=` acts on the bound one unless a call names another,
so the app layer and the pages read and write the collection the user switched to without
each call passing it (and without one of them forgetting to).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

from labeler_storage.store import Store


@functools.lru_cache(maxsize=None)
def _takes_collection(name: str) -> bool:
    attr = getattr(Store, name, None)
    return callable(attr) and "collection" in inspect.signature(attr).parameters


class CollectionStore:
    """`store` with `collection` as every method's default collection."""

    def __init__(self, store: Store, collection: str) -> None:
        self.store = store
        self.collection = collection

    def __repr__(self) -> str:
        return f"CollectionStore({self.store!r}, {self.collection!r})"

    @property
    def cache_key(self) -> str:
        """What a page caches this collection's data under (the database and the collection)."""
        return f"{self.store.url}#{self.collection}"

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.store, name)
        if _takes_collection(name):
            return functools.partial(attr, collection=self.collection)
        return attr
