"""Chunking: whole documents, or fixed windows with overlap in words or characters.

Chunk ids are `{doc_id}#{n}` (n from 0); each chunk keeps its character offsets into the
document text, so `doc.text[chunk.start:chunk.end] == chunk.text` always holds.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from labeler.corpus import Document

_WORD = re.compile(r"\S+")
_FIELD = re.compile(r"\{(title|text)\}")


@dataclass(frozen=True)
class Chunk:
    """A span of one document's text: what is embedded and searched."""

    chunk_id: str
    doc_id: str
    n: int
    start: int
    end: int
    text: str


def _spans_words(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    words = [m.span() for m in _WORD.finditer(text)]
    if not words:
        return [(0, len(text))]
    step = size - overlap
    spans = []
    for i in range(0, len(words), step):
        window = words[i:i + size]
        spans.append((window[0][0], window[-1][1]))
        if i + size >= len(words):
            break
    return spans


def _spans_chars(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    step = size - overlap
    spans = []
    for start in range(0, max(len(text), 1), step):
        spans.append((start, min(start + size, len(text))))
        if start + size >= len(text):
            break
    return spans


def chunk_document(doc: Document, *, strategy: str = "document", size: int = 200,
                   overlap: int = 50, unit: str = "words") -> list[Chunk]:
    """Split one document into chunks (see module docstring)."""
    if strategy == "document":
        spans = [(0, len(doc.text))]
    elif unit == "words":
        spans = _spans_words(doc.text, size, overlap)
    else:
        spans = _spans_chars(doc.text, size, overlap)
    return [Chunk(f"{doc.doc_id}#{n}", doc.doc_id, n, s, e, doc.text[s:e]) for n, (s, e) in enumerate(spans)]


def chunk_corpus(docs: Iterable[Document], *, strategy: str = "document", size: int = 200,
                 overlap: int = 50, unit: str = "words") -> list[Chunk]:
    """Chunks of every document, in corpus order."""
    return [c for d in docs for c in chunk_document(d, strategy=strategy, size=size, overlap=overlap, unit=unit)]


def render(template: str, title: str, text: str) -> str:
    """Fill the text template (`{title} {text}` by default); strip so an empty title adds no space."""
    # One pass, so a title that itself contains "{text}" is not expanded again.
    return _FIELD.sub(lambda m: title if m.group(1) == "title" else text, template).strip()
