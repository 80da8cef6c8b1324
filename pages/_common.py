"""What every page shares: the cached store, corpus and retriever, and the guard for user errors.

`st.cache_resource` objects are shared by every session and never mutated: the Store is
thread-safe, Corpus and Candidate are frozen, a Retriever is only read after it is built.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from labeler import app_service as svc
from labeler.config import RunConfig
from labeler.errors import LabelerError
from storage.store import default_db_url, open_store

T = TypeVar("T")
LABEL_CONFIG = RunConfig()  # the Label page pools candidates with the default dense + BM25 setup


def guard(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call `fn`; a LabelerError is shown to the user and stops the page (anything else is a bug)."""
    try:
        return fn(*args, **kwargs)
    except LabelerError as exc:
        st.error(str(exc))
        st.stop()
        raise  # unreachable: st.stop raises


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
def _retriever(path: str, config_json: str):
    from labeler.retrieval import open_retriever

    # The bar is created inside the cached function: Streamlit replays a cached function's
    # elements on every hit, and can only replay blocks the function made itself.
    bar = st.progress(0.0, text="Opening the corpus…")

    def progress(done: int, total: int, stage: str) -> None:
        bar.progress(min(done / total, 1.0) if total else 1.0, text=f"{stage}: {done:,} / {total:,}")

    built = open_retriever(_corpus(path), RunConfig.from_dict(json.loads(config_json)), progress=progress)
    bar.empty()
    return built


def retriever(path: str, config: RunConfig = LABEL_CONFIG):
    """The Retriever for (corpus path, config): built once per process, with a progress bar."""
    return guard(_retriever, path, config.to_json())


@st.cache_resource(show_spinner=False, max_entries=1024)
def _pooled(path: str, config_json: str, question: str):
    from labeler.candidates import pool_candidates

    return tuple(pool_candidates(_retriever(path, config_json), question))


def pooled(path: str, question: str, config: RunConfig = LABEL_CONFIG):
    """Dense + BM25 candidates for a question, cached: a grade click never searches again."""
    return guard(_pooled, path, config.to_json(), question)


@st.cache_resource(show_spinner=False, max_entries=256)
def _search(path: str, query: str, question: str):
    return tuple(svc.search_results(_corpus(path), query, question))


def keyword_hits(path: str, query: str, question: str):
    """Keyword/id search results, cached per (corpus, query, question)."""
    return guard(_search, path, query, question)


def active_corpus_path() -> str:
    """The corpus the app works on (see labeler.app_service.active_corpus); notes are shown."""
    active = guard(svc.active_corpus, store())
    if active.note:
        st.warning(active.note)
    return active.path


def annotator() -> str:
    """The annotator's name from the sidebar (kept in the URL as ?annotator=...)."""
    return (st.session_state.get("annotator") or "").strip()


def workspace(*, with_retriever: bool = True):
    """(store, corpus path, corpus, retriever or None): what most pages start from."""
    s = store()
    path = active_corpus_path()
    corp = corpus(path)
    guard(svc.ensure_corpus_recorded, s, path, corp)
    return s, path, corp, (retriever(path) if with_retriever else None)


def flash(message: str, kind: str = "error") -> None:
    """Keep a message from a callback to show on the next run (callbacks run before the page)."""
    st.session_state.setdefault("_flash", []).append((kind, message))


def show_flash() -> None:
    """Show and forget the messages callbacks left."""
    for kind, message in st.session_state.pop("_flash", []):
        getattr(st, kind)(message)
