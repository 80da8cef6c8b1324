"""The data pages start from, loaded once per process and shared by every session.

The work (building retrievers, pooling candidates) is labeler_app.pooling's; this module caches it.
`st.cache_resource` objects are never mutated: the Store is thread-safe, Corpus and Candidate
are frozen, a Retriever is only read after it is built. The retriever is keyed on the corpus and
the config's build part only (model, chunking, index): k, filters, fusion, reranker and the
abstention threshold are per search. Lists that change with the database (saved runs) are
cached on `store.collections.revision()`, which every write bumps, so a rerun that changed nothing reads
one counter.
"""
from __future__ import annotations

import time

import streamlit as st

from labeler.config import RunConfig
from labeler_app import background, pooling
from labeler_app import workspace as ws
from labeler_app import stores as db
from labeler_app.label import search_results
from labeler_app.text import inert
from labeler_pages._common import guard

LABEL_CONFIG = RunConfig()  # the Label page pools candidates with the default dense + BM25 setup


@st.cache_resource(show_spinner=False)
def _store(url: str):
    return db.open_database(url)


def store():
    """The app's database (one Store per URL, shared by all sessions), bound to the current collection
    (labeler_pages._collections: `?set=` in the URL)."""
    from labeler_pages._collections import current_collection

    shared = guard(_store, db.database_url())
    return db.bound(shared, current_collection(shared))


@st.cache_resource(show_spinner="Loading the corpus…", max_entries=4)
def _corpus(path: str, signature: str):
    from labeler_app.corpus_files import load_corpus_within_limits

    return load_corpus_within_limits(path)


SIGNATURE_EVERY = 2.0  # seconds: a corpus folder is walked at most this often per process
_signatures: dict[str, tuple[float, str]] = {}


def signature(path: str) -> str:
    """The corpus's on-disk signature (labeler_app.workspace.corpus_signature), looked at every 2 s at most."""
    now = time.monotonic()
    seen = _signatures.get(path)
    if seen is None or now - seen[0] > SIGNATURE_EVERY:
        seen = _signatures[path] = (now, ws.corpus_signature(path))
    return seen[1]


def look_again() -> None:
    """Look at every corpus folder on the next `signature` call, as if SIGNATURE_EVERY had passed."""
    _signatures.clear()


def corpus(path: str):
    """The corpus at `path`, loaded once per process, and again when its files change on disk."""
    return guard(_corpus, path, signature(path))


def run_corpus(run_path: str | None, open_path: str, open_corpus):
    """The corpus a saved run searched: the open one when the run recorded no other, else the one
    at its recorded path, if that still loads (None when it does not: the page goes on without it)."""
    from labeler.errors import LabelerError

    if not run_path or run_path == open_path:
        return open_corpus
    try:
        return _corpus(run_path, signature(run_path))
    except (LabelerError, OSError):
        return None


def _start_build(path: str, build_json: str, signature: str):
    return pooling.start_build(lambda: _corpus(path, signature), path, build_json, signature)


@st.cache_resource(show_spinner=False)
def _ready() -> set[tuple]:
    """Build keys whose retriever `_retriever` holds (cleared with the cache it describes)."""
    return set()


@st.cache_resource(show_spinner=False, max_entries=4)
def _retriever(path: str, build_json: str, signature: str):
    # The bar is created inside the cached function: Streamlit replays a cached function's
    # elements on every hit, and can only replay blocks the function made itself.
    build = _start_build(path, build_json, signature)
    bar = st.progress(0.0, text="Opening the corpus…")
    built = pooling.watch_build(build, lambda status: bar.progress(
        min(status.done / status.total, 1.0) if status.total else 0.0, text=status.text))
    bar.empty()
    key = pooling.build_key(path, build_json, signature)
    background.forget(key)  # cached here from now on
    _ready().add(key)
    return built


def retriever(path: str, config: RunConfig = LABEL_CONFIG):
    """The Retriever for the corpus and the config's build part: built once per process (waits,
    with a progress bar, while it is being built)."""
    return guard(_retriever, path, config.build().to_json(), signature(path))


def dense_status(path: str, config: RunConfig = LABEL_CONFIG, *, wait: bool = True):
    """None when the retriever is ready, else the build's progress (the Label page then pools BM25
    candidates and says so). With `wait`, loading a cached index is waited for; as soon as anything
    has to be embedded (on any corpus: loading the model alone takes seconds), the page goes on
    without dense candidates."""
    build_json, sig = config.build().to_json(), signature(path)
    if pooling.build_key(path, build_json, sig) in _ready():  # a rerun: never start (and wait for) another load of an index already held
        return None
    build = guard(_start_build, path, build_json, sig)
    if wait:
        with st.spinner("Opening the corpus…"):
            if (status := pooling.wait_unless_embedding(build)) is not None:
                return status
    if build.wait(0):
        guard(_retriever, path, build_json, sig)  # holds it from now on; raises the build's error the usual way
        return None
    return build.status()


@st.cache_resource(show_spinner="BM25 index…", max_entries=4)
def _bm25_retriever(path: str, build_json: str, signature: str):
    return pooling.bm25_retriever(_corpus(path, signature), build_json)


@st.cache_resource(show_spinner=False, max_entries=1024)
def _bm25_pooled(path: str, build_json: str, question: str, signature: str):
    return pooling.pool(_bm25_retriever(path, build_json, signature), question, dense=False)


def bm25_pooled(path: str, question: str, config: RunConfig = LABEL_CONFIG):
    """BM25 candidates only, while the dense index is being built (seconds to build, not minutes)."""
    return guard(_bm25_pooled, path, config.build().to_json(), question, signature(path))


@st.cache_resource(show_spinner=False, max_entries=1024)
def _pooled(path: str, build_json: str, question: str, signature: str):
    return pooling.pool(_retriever(path, build_json, signature), question)


def pooled(path: str, question: str, config: RunConfig = LABEL_CONFIG):
    """Dense + BM25 candidates for a question, cached: a grade click never searches again."""
    return guard(_pooled, path, config.build().to_json(), question, signature(path))


@st.cache_resource(show_spinner=False, max_entries=4)
def _corpus_text(path: str, signature: str):
    return pooling.corpus_text(_corpus(path, signature))


# A question's features hold a copy of the corpus's tf-idf rows (SciFact: ~10 MB): a few questions at a time.
@st.cache_resource(show_spinner=False, max_entries=16)
def _judging_features(path: str, build_json: str, question: str, signature: str, dense: bool):
    retriever = (_retriever if dense else _bm25_retriever)(path, build_json, signature)
    return pooling.judging_features(_corpus_text(path, signature), retriever, question, dense=dense)


def judging_features(path: str, question: str, *, dense: bool, config: RunConfig = LABEL_CONFIG):
    """What the judging model reads for a question (labeler.judging): the corpus's tf-idf, built once
    per corpus and process, and dense (`dense`: its index is ready) and BM25 scores of every document,
    once per question."""
    return guard(_judging_features, path, config.build().to_json(), question, signature(path), dense)


@st.cache_resource(show_spinner=False, max_entries=256)
def _search(path: str, query: str, question: str, signature: str):
    return tuple(search_results(_corpus(path, signature), query, question))


def keyword_hits(path: str, query: str, question: str):
    """Keyword/id search results, cached per (corpus, query, question)."""
    return guard(_search, path, query, question, signature(path))


@st.cache_data(show_spinner=False, max_entries=8)
def _saved_runs(url: str, collection: str, revision: int):
    return db.saved_runs(db.bound(_store(url), collection))


@st.cache_data(show_spinner=False, max_entries=16)
def _holes(url: str, collection: str, revision: int, run_id: int):
    from labeler_app.holes import find_holes

    return find_holes(db.bound(_store(url), collection), run_id)


@st.cache_data(show_spinner=False, max_entries=16)
def _incomplete(url: str, collection: str, revision: int, path: str, signature: str, query_ids: tuple[str, ...]) -> int:
    from labeler_app.judging_order import incomplete_judging

    statuses = db.questions(db.bound(_store(url), collection))
    return incomplete_judging(statuses, [d.doc_id for d in _corpus(path, signature).documents], query_ids)


def incomplete_judging(s, path: str, query_ids) -> int:
    """How many of these questions rest on judging no stopping estimate calls likely complete; read
    again only after a write."""
    return guard(_incomplete, db.database_url(), s.collection, guard(db.revision, s), path, signature(path), tuple(query_ids))


@st.cache_data(show_spinner=False, max_entries=256, ttl=60)
def _my_judging(url: str, collection: str, name: str, role: str, team: bool, query_id: str):
    from labeler_app.access import Actor, Role
    from labeler_app.spread import my_judging

    return my_judging(db.bound(_store(url), collection), Actor(name, Role(role), team))


def my_judging(s, me, query_id: str):
    """The annotator's judging over the collection, for "likely to find more elsewhere"; read again on another
    question or after a minute, not on every grade: the grades it counts are of the other questions (the one
    on screen is read from its own status), which only another tab changes meanwhile."""
    return guard(_my_judging, db.database_url(), s.collection, me.name, me.role.value, me.team, query_id)


def run_holes(s, run_id: int):
    """A saved run's unjudged top-k documents per question; read again only after a write."""
    return guard(_holes, db.database_url(), s.collection, guard(db.revision, s), run_id)


def saved_runs(s) -> list:
    """The collection's saved runs, newest first; read again only after a write."""
    return guard(_saved_runs, db.database_url(), s.collection, guard(db.revision, s))


def workspace(*, with_retriever: bool = True):
    """(store, corpus path, corpus, retriever or None): what most pages start from."""
    s = store()
    active = guard(ws.active_corpus, s)
    if active.note:
        st.warning(inert(active.note))
    corp = corpus(active.path)
    guard(ws.ensure_corpus_recorded, s, active, corp)
    return s, active.path, corp, (retriever(active.path) if with_retriever else None)
