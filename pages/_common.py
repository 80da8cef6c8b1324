"""What every page shares: the cached store, corpus and retriever, named session keys, and the
guards that show a user error instead of a traceback.

`st.cache_resource` objects are shared by every session and never mutated: the Store is
thread-safe, Corpus and Candidate are frozen, a Retriever is only read after it is built. The
retriever is keyed on the corpus and the config's build part only (model, chunking, index):
k, filters, fusion, reranker and the abstention threshold are per search.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from app import workspace as ws
from app.label import search_results
from labeler.config import RunConfig
from labeler.errors import LabelerError
from storage import default_db_url, open_store

T = TypeVar("T")
LABEL_CONFIG = RunConfig()  # the Label page pools candidates with the default dense + BM25 setup


class Keys:
    """Session-state keys shared across pages and callbacks (UI cursors only; data lives in the database)."""

    ANNOTATOR = "annotator"
    QUESTION = "q"
    FOCUS = "focus"
    FLASH = "_flash"
    CONFIRM_DELETE = "confirm_delete"
    EVAL_RUN = "eval_run"


def guard(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call `fn`; a LabelerError is shown to the user and stops the page (anything else is a bug)."""
    try:
        return fn(*args, **kwargs)
    except LabelerError as exc:
        st.error(str(exc))
        st.stop()
        raise  # unreachable: st.stop raises


def act(fn: Callable[..., Any], *args: Any, success: str | None = None, **kwargs: Any) -> Any:
    """Run an action from a callback: its result (True when it returns nothing), or False after a
    LabelerError. The error (or `success`) shows on the next run: callbacks run before the page."""
    try:
        result = fn(*args, **kwargs)
    except LabelerError as exc:
        flash(str(exc))
        return False
    if success:
        flash(success, "success")
    return True if result is None else result


def flash(message: str, kind: str = "error") -> None:
    """Keep a message from a callback to show on the next run (callbacks run before the page)."""
    st.session_state.setdefault(Keys.FLASH, []).append((kind, message))


def show_flash() -> None:
    """Show and forget the messages callbacks left."""
    for kind, message in st.session_state.pop(Keys.FLASH, []):
        getattr(st, kind)(message)


@st.cache_resource(show_spinner=False)
def _store(url: str):
    return open_store(url)


def store():
    """The app's database (one Store per URL, shared by all sessions)."""
    return guard(_store, default_db_url())


@st.cache_resource(show_spinner="Loading the corpus…", max_entries=4)
def _corpus(path: str):
    from labeler.corpus import load_corpus

    return load_corpus(path)


def corpus(path: str):
    """The corpus at `path`, loaded once per process."""
    return guard(_corpus, path)


@st.cache_resource(show_spinner="Building or loading the index (the first start embeds every document)…",
                   max_entries=4)
def _retriever(path: str, build_json: str):
    from labeler.config import BuildConfig
    from labeler.retrieval import open_retriever

    # The bar is created inside the cached function: Streamlit replays a cached function's
    # elements on every hit, and can only replay blocks the function made itself.
    bar = st.progress(0.0, text="Opening the corpus…")

    def progress(done: int, total: int, stage: str) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{stage}: {done:,} / {total:,}")

    built = open_retriever(_corpus(path), BuildConfig.from_json(build_json), progress=progress)
    bar.empty()
    return built


def retriever(path: str, config: RunConfig = LABEL_CONFIG):
    """The Retriever for the corpus and the config's build part: built once per process."""
    return guard(_retriever, path, config.build().to_json())


@st.cache_resource(show_spinner=False, max_entries=1024)
def _pooled(path: str, build_json: str, question: str):
    from labeler.candidates import pool_candidates

    return tuple(pool_candidates(_retriever(path, build_json), question))


def pooled(path: str, question: str, config: RunConfig = LABEL_CONFIG):
    """Dense + BM25 candidates for a question, cached: a grade click never searches again."""
    return guard(_pooled, path, config.build().to_json(), question)


@st.cache_resource(show_spinner=False, max_entries=256)
def _search(path: str, query: str, question: str):
    return tuple(search_results(_corpus(path), query, question))


def keyword_hits(path: str, query: str, question: str):
    """Keyword/id search results, cached per (corpus, query, question)."""
    return guard(_search, path, query, question)


def annotator() -> str:
    """The annotator's name from the sidebar (kept in the URL as ?annotator=...)."""
    return (st.session_state.get(Keys.ANNOTATOR) or "").strip()


def workspace(*, with_retriever: bool = True):
    """(store, corpus path, corpus, retriever or None): what most pages start from."""
    s = store()
    active = guard(ws.active_corpus, s)
    if active.note:
        st.warning(active.note)
    corp = corpus(active.path)
    guard(ws.ensure_corpus_recorded, s, active.path, corp)
    return s, active.path, corp, (retriever(active.path) if with_retriever else None)
