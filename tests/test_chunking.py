"""Chunking: ids, offsets and windows with overlap."""
from __future__ import annotations

import pytest

from labeler.chunking import chunk_document, render
from labeler.corpus import Document

DOC = Document("d1", "Title", "one two three four five six seven")


def test_chunk_document_whole_document_is_one_chunk():
    [chunk] = chunk_document(DOC)
    assert (chunk.chunk_id, chunk.start, chunk.end, chunk.text) == ("d1#0", 0, len(DOC.text), DOC.text)


def test_chunk_document_word_windows_overlap_and_keep_offsets():
    # 7 words, size 3, overlap 1 -> step 2: [one two three] [three four five] [five six seven]
    chunks = chunk_document(DOC, strategy="window", size=3, overlap=1, unit="words")
    assert [c.text for c in chunks] == ["one two three", "three four five", "five six seven"]
    assert [c.chunk_id for c in chunks] == ["d1#0", "d1#1", "d1#2"]
    for c in chunks:
        assert DOC.text[c.start:c.end] == c.text


def test_chunk_document_char_windows_cover_the_text():
    # 33 chars, size 10, overlap 2 -> starts 0, 8, 16, 24 (24+10 >= 33 stops)
    chunks = chunk_document(DOC, strategy="window", size=10, overlap=2, unit="chars")
    assert [c.start for c in chunks] == [0, 8, 16, 24]
    assert chunks[-1].end == len(DOC.text)
    assert all(DOC.text[c.start:c.end] == c.text for c in chunks)


@pytest.mark.parametrize("size, overlap", [(1, 0), (2, 1), (5, 4), (100, 10)])
def test_chunk_document_windows_never_lose_a_word(size, overlap):
    chunks = chunk_document(DOC, strategy="window", size=size, overlap=overlap)
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(DOC.text) if not ch.isspace())


def test_render_fills_title_and_text_once():
    assert render("{title} {text}", "", "body") == "body"
    assert render("{title} {text}", "T {text}", "body") == "T {text} body"
