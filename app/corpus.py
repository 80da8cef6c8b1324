"""Corpus page: what is open (documents, chunks, model, index) and the document browser. Opening
another corpus (a path on the server, an upload) is `labeler_app.corpus_files`, re-exported here."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labeler.corpus import Corpus
from labeler.paths import SAMPLE_CORPUS
from labeler.retrieval import Retriever
from labeler_app.access import Actor, Can
from labeler_app.corpus_files import UPLOAD_SUFFIXES, load_corpus_within_limits, open_server_corpus, save_uploaded_corpus
from labeler_app.text import inert, inert_code
from labeler_app.workspace import normalize_corpus_path
from labeler_storage import Store

__all__ = ["UPLOAD_SUFFIXES", "save_uploaded_corpus"]  # the page's upload check lives in labeler_app.corpus_files


def source_line(info: CorpusSummary, actor: Actor) -> str:
    """Where the open corpus comes from. Server paths are for admins (who open corpora); anyone
    else sees the corpus's name and fingerprint, not the server's layout. As markdown (a path is data)."""
    if actor.can(Can.OPEN_CORPUS):
        return (f"Source: {inert_code(info.source)} · fingerprint `{info.fingerprint[:19]}…` · "
                f"cache {inert_code(str(info.cache))}")
    return f"Source: {inert_code(Path(info.source).name)} · fingerprint `{info.fingerprint[:19]}…`"


def open_server_path(actor: Actor, text: str) -> tuple[str, Corpus]:
    """A corpus under the corpus roots, loaded within the limits (admins only); its path and corpus."""
    actor.require(Can.OPEN_CORPUS)
    return open_server_corpus(text)


def open_sample(actor: Actor) -> tuple[str, Corpus]:
    """The bundled sample corpus (admins only: opening it changes what everyone works on)."""
    actor.require(Can.OPEN_CORPUS)
    path = normalize_corpus_path(SAMPLE_CORPUS)
    return path, load_corpus_within_limits(path)


def upload_corpus(actor: Actor, name: str, data: bytes) -> tuple[str, Corpus]:
    """Check and keep an uploaded corpus (admins only); its kept path and corpus."""
    actor.require(Can.OPEN_CORPUS)
    path = save_uploaded_corpus(name, data)
    return path, load_corpus_within_limits(path)


@dataclass(frozen=True)
class SwitchPreview:
    """What opening another corpus does to the golden set: judged documents it lacks."""

    path: str
    documents: int
    judged: int  # distinct judged documents in the golden set
    missing: int  # of those, how many the new corpus lacks
    questions_hit: int  # questions with at least one judged document missing

    @property
    def text(self) -> str:
        """The confirmation question, as markdown (the path is data)."""
        head = f"Open {inert(self.path)} ({self.documents:,} documents) for everyone on this server?"
        if not self.judged:
            return head + " No document is judged yet, so no label is affected."
        if not self.missing:
            return head + f" All {self.judged:,} judged documents are in it."
        return (head + f" {self.missing:,} of the {self.judged:,} judged documents are missing from it, "
                f"in {self.questions_hit:,} questions: their labels will point at nothing.")


def switch_preview(store: Store, path: str, corpus: Corpus) -> SwitchPreview:
    """How many judged documents of the golden set the corpus at `path` lacks."""
    ids = corpus.doc_ids()
    judged: dict[str, set[str]] = {}
    for j in (store.judgments.list() if store.collections.get() is not None else ()):
        judged.setdefault(j.doc_id, set()).add(j.query_id)
    missing = [d for d in judged if d not in ids]
    return SwitchPreview(path, len(corpus), len(judged), len(missing),
                         len(set().union(*(judged[d] for d in missing))) if missing else 0)


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


PAGE_SIZE = 50
MAX_MATCHES = 5_000  # a keyword search lists at most this many (pages of PAGE_SIZE)


@dataclass(frozen=True)
class BrowsePage:
    """One page of the document browser."""

    rows: list[dict[str, Any]]
    total: int  # documents (no query) or matches
    page: int  # 1-based
    pages: int
    searched: bool = False

    @property
    def caption(self) -> str:
        """"51-100 of 1,460 documents" / "3 matches"."""
        if not self.rows:
            return "No document matches."
        first = (self.page - 1) * PAGE_SIZE + 1
        what = "matches" if self.searched else "documents"
        return f"{first:,}-{first + len(self.rows) - 1:,} of {self.total:,} {what}"


def browse_documents(corpus: Corpus, query: str, *, page: int = 1) -> BrowsePage:
    """One page of the document browser: keyword/id search matches, or every document in order."""
    from labeler.candidates import keyword_search

    docs = keyword_search(corpus, query, limit=MAX_MATCHES) if query.strip() else corpus.documents
    pages = max(1, -(-len(docs) // PAGE_SIZE))
    page = min(max(1, page), pages)
    shown = docs[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
    rows = [{"doc_id": d.doc_id, "title": d.title, "chars": len(d.text),
             **{k: str(v) for k, v in d.metadata.items() if isinstance(v, (str, int, float, bool))}}
            for d in shown]
    return BrowsePage(rows, len(docs), page, pages, searched=bool(query.strip()))


