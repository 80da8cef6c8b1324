"""BM25 over chunks with bm25s (Lucene variant, k1=0.9, b=0.4, English stopwords + stemmer).

These are the parameters of Anserini's BEIR regressions and of the BM25 runs shipped with
the test collections, so numbers here are comparable with theirs.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from labeler.errors import CorpusError

K1, B = 0.9, 0.4
# bm25s's default `\b\w\w+\b` cuts Indic words at every vowel sign (a combining mark is not
# `\w`): "छुट्टी" became nothing and "कार्यालय" became "लय". Marks of the Indic blocks
# (U+0900-U+0DFF) count as word characters here; for other scripts this is the default.
TOKEN_PATTERN = r"(?u)[\w\u0900-\u0DFF]{2,}"


@functools.lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stop-worded, stemmed tokens (as strings) per text."""
    import bm25s

    return bm25s.tokenize(list(texts), token_pattern=TOKEN_PATTERN, stopwords="en", stemmer=_stemmer(),
                          return_ids=False, show_progress=False)


class BM25Index:
    """A bm25s index over a list of texts, searched by position."""

    def __init__(self, model) -> None:
        self._model = model

    @classmethod
    def build(cls, texts: Sequence[str], *, source: str | Path | None = None) -> "BM25Index":
        """Index the texts; a CorpusError (naming `source`) when not one of them has an indexable word."""
        import bm25s

        tokens = bm25s.tokenize(list(texts), token_pattern=TOKEN_PATTERN, stopwords="en",
                                stemmer=_stemmer(), show_progress=False)
        if not tokens.vocab:  # bm25s fails with a bare `max() arg is an empty sequence`
            raise CorpusError(f"no document has a word BM25 can index ({len(texts)} texts, all empty, "
                              "stop words, punctuation or single letters)", path=source,
                              hint="check the corpus's text field, or search it with --mode dense.")
        model = bm25s.BM25(method="lucene", k1=K1, b=B)
        model.index(tokens, show_progress=False)
        return cls(model)

    def save(self, folder: Path) -> None:
        """Write the index to a folder (bm25s's own format)."""
        self._model.save(str(folder))

    @classmethod
    def load(cls, folder: Path) -> "BM25Index":
        """Read an index written by `save`."""
        import bm25s

        return cls(bm25s.BM25.load(str(folder)))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text for one query (0 where no query term occurs)."""
        tokens = tokenize([query])[0]
        vocab = self._model.vocab_dict
        known = [t for t in tokens if t in vocab]
        if not known:
            return np.zeros(self._model.scores["num_docs"], dtype=np.float32)
        return np.asarray(self._model.get_scores(known), dtype=np.float32)

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, positions) with score > 0, restricted to `allowed` positions if given."""
        scores = self.scores(query)
        if allowed is not None:
            mask = np.zeros(len(scores), dtype=bool)
            mask[allowed] = True
            scores = np.where(mask, scores, 0.0)
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
        order = np.lexsort((hits, -scores[hits]))  # score desc, then position for determinism
        hits = hits[order]
        return scores[hits], hits
