"""The corpus model: a Document (what is judged) and a Corpus (an ordered, id-unique set of them
with a content fingerprint). The readers that build one are in `labeler.corpus.readers`."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Document:
    """One judged unit: documents, not chunks, are labelled and scored."""

    doc_id: str
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Frozen all the way down: a cached corpus is shared by every session.
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @cached_property
    def content_hash(self) -> str:
        """`sha256:<hex>` of what a judge sees: title, text and metadata (DESIGN: doc_hash)."""
        record = [self.title, self.text, dict(self.metadata)]
        return "sha256:" + hashlib.sha256(json.dumps(record, ensure_ascii=False, sort_keys=True,
                                                     default=str).encode()).hexdigest()


@dataclass(frozen=True)
class Corpus:
    """An ordered, id-unique collection of documents with a content fingerprint."""

    documents: tuple[Document, ...]
    source: str = ""
    empty: tuple[str, ...] = ()  # ids of documents with neither title nor text (kept; BEIR collections only)

    @cached_property
    def fingerprint(self) -> str:
        """`sha256:<hex>` over ids, titles, texts and metadata, independent of file order."""
        h = hashlib.sha256()
        for doc in sorted(self.documents, key=lambda d: d.doc_id):
            record = [doc.doc_id, doc.title, doc.text, dict(doc.metadata)]
            h.update(json.dumps(record, ensure_ascii=False, sort_keys=True, default=str).encode())
            h.update(b"\n")
        return "sha256:" + h.hexdigest()

    @cached_property
    def doc_hashes(self) -> dict[str, str]:
        """doc_id -> content hash: the corpus version's identity, document by document."""
        return {d.doc_id: d.content_hash for d in self.documents}

    @cached_property
    def _by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self):
        return iter(self.documents)

    def get(self, doc_id: str) -> Document | None:
        """The document with this id, or None."""
        return self._by_id.get(doc_id)

    def doc_ids(self) -> frozenset[str]:
        """Every document id."""
        return frozenset(self._by_id)

    def metadata_values(self) -> dict[str, list[str]]:
        """Metadata key -> sorted distinct values (as strings), for filter pickers."""
        values: dict[str, set[str]] = {}
        for doc in self.documents:
            for key, value in doc.metadata.items():
                if isinstance(value, (str, int, float, bool)):
                    values.setdefault(key, set()).add(str(value))
        return {k: sorted(v) for k, v in sorted(values.items())}
