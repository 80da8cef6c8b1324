"""Corpus page: what is open (documents, chunks, model, index) and the document browser. Opening
another corpus (a path on the server, an upload) is `app.corpus_files`, re-exported here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.corpus_files import UPLOAD_SUFFIXES, save_uploaded_corpus  # noqa: F401 - the page's upload check lives there
from labeler.corpus import Corpus
from labeler.retrieval import Retriever


@dataclass(frozen=True)
class CorpusSummary:
    """The header of the Corpus page."""

    documents: int
    chunks: int
    model: str
    index: str
    source: str
    fingerprint: str
    cache: str


def corpus_summary(retriever: Retriever) -> CorpusSummary:
    """Document and chunk counts, model, index type, where the corpus came from and its cache."""
    info = retriever.info
    return CorpusSummary(documents=info["documents"], chunks=info["chunks"], model=info["model"], index=info["index"],
                         source=retriever.corpus.source, fingerprint=info["corpus_fingerprint"],
                         cache=str(info["cache"]))


def browse_documents(corpus: Corpus, query: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """Rows for the document browser: keyword/id search, or the first documents."""
    from labeler.candidates import keyword_search

    docs = keyword_search(corpus, query, limit=limit) if query.strip() else list(corpus.documents[:limit])
    return [{"doc_id": d.doc_id, "title": d.title, "chars": len(d.text),
             **{k: str(v) for k, v in d.metadata.items() if isinstance(v, (str, int, float, bool))}}
            for d in docs]


