"""Reranking the head of a ranking with a sentence-transformers CrossEncoder."""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from labeler.errors import ConfigError
from labeler.retrieval.hits import DocHit, ranked


@functools.lru_cache(maxsize=2)
def load_cross_encoder(path: str):
    """Load a sentence-transformers CrossEncoder once per process."""
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(path, device="cpu")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load reranker {path!r}: {exc}",
                          hint="give the folder of a saved sentence-transformers CrossEncoder.") from None


def rerank(question: str, hits: list[DocHit], text_of: Callable[[DocHit], str], *, model: str, top: int,
           k: int) -> list[DocHit]:
    """The first `top` hits reordered by CrossEncoder score of (question, best chunk text); top k kept.

    Documents past the reranked head keep their order, strictly below it.
    """
    head, rest = hits[:top], hits[top:]
    if not head:
        return hits
    encoder = load_cross_encoder(model)
    pairs = [(question, text_of(h)) for h in head]
    # A model with several labels scores with its last one (the "relevant" class).
    scores = np.asarray(encoder.predict(pairs, show_progress_bar=False), dtype=np.float64).reshape(len(head), -1)[:, -1]
    reordered = ranked([(h.doc_id, float(s), h.chunk_id) for h, s in zip(head, scores)], len(head))
    floor = min(h.score for h in reordered)
    tail = [(h.doc_id, floor - 1.0 - i, h.chunk_id) for i, h in enumerate(rest)]
    return ranked([(h.doc_id, h.score, h.chunk_id) for h in reordered] + tail, k)
