"""Chunking: ids, offsets and windows with overlap."""
from __future__ import annotations

import pytest

from labeler.corpus import Document
from labeler.retrieval.chunking import chunk_corpus, chunk_document, render

DOC = Document("d1", "Title", "one two three four five six seven")


def test_chunk_document_whole_document_is_one_chunk():
    [chunk] = chunk_document(DOC)
    assert (chunk.chunk_id, chunk.start, chunk.end, chunk.text) == ("d1#0", 0, len(DOC.text), DOC.text)


@pytest.mark.parametrize("unit, size, overlap, texts", [
    # 7 words, size 3, overlap 1 -> step 2: [one two three] [three four five] [five six seven]
    ("words", 3, 1, ["one two three", "three four five", "five six seven"]),
    # 33 chars, size 10, overlap 2 -> starts 0, 8, 16, 24 (24 + 10 >= 33 stops)
    ("chars", 10, 2, ["one two th", "three four", "ur five si", "six seven"]),
])
def test_chunk_document_windows_overlap_and_keep_offsets(unit, size, overlap, texts):
    chunks = chunk_document(DOC, strategy="window", size=size, overlap=overlap, unit=unit)
    assert [c.text for c in chunks] == texts
    assert [c.chunk_id for c in chunks] == [f"d1#{n}" for n in range(len(texts))]
    assert chunks[-1].end == len(DOC.text)
    assert all(DOC.text[c.start:c.end] == c.text for c in chunks)


@pytest.mark.parametrize("unit", ["words", "chars"])
@pytest.mark.parametrize("size, overlap", [(1, 0), (2, 1), (5, 4), (100, 10)])
def test_chunk_document_windows_never_lose_a_character(unit, size, overlap):
    chunks = chunk_document(DOC, strategy="window", size=size, overlap=overlap, unit=unit)
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(DOC.text) if not ch.isspace())


@pytest.mark.parametrize("unit", ["words", "chars"])
def test_chunk_document_empty_text_is_one_empty_chunk(unit):
    [chunk] = chunk_document(Document("e", "Only a title", ""), strategy="window", size=3, overlap=1, unit=unit)
    assert (chunk.chunk_id, chunk.start, chunk.end, chunk.text) == ("e#0", 0, 0, "")


def test_chunk_corpus_keeps_corpus_order():
    docs = [Document("b", "", "x y z"), Document("a", "", "p q")]
    assert [c.chunk_id for c in chunk_corpus(docs, strategy="window", size=2, overlap=0)] == ["b#0", "b#1", "a#0"]


@pytest.mark.parametrize("template, title, text, expected", [
    ("{title} {text}", "", "body", "body"),  # an empty title adds no space
    ("{title} {text}", "T {text}", "body", "T {text} body"),  # a title containing {text} is not expanded again
    ("{text}", "T", "body", "body"),
    ("Q: {title}\n{text}", "T", "body", "Q: T\nbody"),
])
def test_render_fills_title_and_text_once(template, title, text, expected):
    assert render(template, title, text) == expected
