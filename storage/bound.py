"""A Store bound to one collection: what the app passes around once the user picked a collection.

Every method of the store's topics (`bound.questions.add(...)`) that takes `collection=` acts on
the bound one unless a call names another, so the app layer and the pages read and write the
collection the user switched to without each call passing it (and without one of them forgetting to).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

from labeler_storage.store import Store
from labeler_storage.topics import Topic


@functools.lru_cache(maxsize=None)
def _takes_collection(owner: type, name: str) -> bool:
    attr = getattr(owner, name, None)
    return callable(attr) and "collection" in inspect.signature(attr).parameters


class _Bound:
    """`target` (a Store or one of its topics) with `collection` as every method's default collection."""

    def __init__(self, target: Any, collection: str) -> None:
        self._target = target
        self.collection = collection

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if isinstance(attr, Topic):
            return _Bound(attr, self.collection)
        if _takes_collection(type(self._target), name):
            return functools.partial(attr, collection=self.collection)
        return attr

    def __repr__(self) -> str:
        return f"{self._target!r} bound to {self.collection!r}"


class CollectionStore(_Bound):
    """`store` with `collection` as the default collection of every topic's methods."""

    def __init__(self, store: Store, collection: str) -> None:
        super().__init__(store, collection)
        self.store = store

    def __repr__(self) -> str:
        return f"CollectionStore({self.store!r}, {self.collection!r})"

    @property
    def cache_key(self) -> str:
        """What a page caches this collection's data under (the database and the collection)."""
        return f"{self.store.url}#{self.collection}"
