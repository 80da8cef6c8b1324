"""Background builds (labeler_app.background) and the Label page labelling with BM25 while the dense index
of a corpus is still being embedded (real model, real FAISS, real BM25; the cache starts empty)."""
from __future__ import annotations

import threading
import time

import pytest

from labeler_app import background
from browser_support import app_home, grade_card, open_app, sample_embeddings, submit_question, texts  # noqa: F401 - fixtures


def test_build_reports_progress_and_its_result():
    gate = threading.Event()

    def work(progress):
        progress(3, 10, "embedding")
        gate.wait(5)
        progress(10, 10, "embedding")
        return "index"

    build = background.start(("t", 1), work)
    assert background.start(("t", 1), work) is build  # one build per key
    time.sleep(0.1)
    status = build.status()
    assert (status.done, status.total, status.stage, status.ready) == (3, 10, "embedding", False)
    assert status.text.startswith("embedding: 3 / 10")
    gate.set()
    assert build.result() == "index" and build.status().ready


def test_a_failed_build_raises_its_error_and_is_started_again():
    calls = []

    def work(progress):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("corpus is broken")
        return "fixed"

    build = background.start(("t", 2), work)
    with pytest.raises(ValueError, match="corpus is broken"):
        build.result()
    assert build.status().failed
    assert background.start(("t", 2), work).result() == "fixed"


def test_time_left_from_the_pace_so_far():
    assert background.time_left(0, 100, 5) == "" and background.time_left(100, 100, 5) == ""
    assert background.time_left(50, 100, 10.0) == " · about 10 s left"
    assert background.time_left(10, 1460, 60.0) == " · about 145 min left"


def test_label_page_offers_bm25_candidates_while_dense_builds(monkeypatch, tmp_path):
    import os

    import streamlit as st

    monkeypatch.setenv("LABELER_HOME", str(tmp_path / "home"))  # an empty cache: the sample corpus embeds
    monkeypatch.delenv("LABELER_CORPUS", raising=False)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        at = open_app(annotator="asha")
        submit_question(at, "How many vacation days do I get?")
        assert not at.exception, at.exception
        notes = [m for m in texts(at.info) if "dense index is still being built" in m]
        if notes:  # the page went on with BM25 alone: only BM25 badges
            badges = " ".join(m.value for m in at.markdown)
            assert "BM25 #1" in badges and "dense #" not in badges
        else:
            pytest.fail("the page waited for the whole embedding instead of offering BM25 candidates")
        grade_card(at, 0, 2)  # grading works meanwhile, and is kept
        background.wait_all()  # let the embedding finish
        at.run()
        badges = " ".join(m.value for m in at.markdown)
        assert "dense #" in badges and not [m for m in texts(at.info) if "still being built" in m]
        from labeler_storage import open_store
        assert len(open_store(os.path.join(tmp_path, "home", "labeler.db")).judgments.list()) == 1
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()


def test_a_rerun_never_opens_the_index_again(app_home, sample_embeddings, monkeypatch):
    """The model and index load once per process: grade clicks and reruns reuse them (a rerun on
    SciFact used to reopen its index in a background thread and wait ~70 ms for it)."""
    import labeler.retrieval as retrieval

    opened = []
    real = retrieval.open_retriever
    monkeypatch.setattr(retrieval, "open_retriever", lambda *a, **k: opened.append(1) or real(*a, **k))
    at = open_app(annotator="asha")
    submit_question(at, "How many vacation days do I get?")
    assert not at.exception, at.exception
    assert len(opened) == 1
    for card, grade in ((0, 2), (1, 0), (0, 3)):
        grade_card(at, card, grade)
        assert not at.exception, at.exception
    at.run()
    assert len(opened) == 1


def test_background_calls_keep_a_failure_a_while_then_ask_again():
    calls = []

    def failing():
        calls.append(time.monotonic())
        raise TimeoutError("the system's own timeout, not 'still running'")

    pool = background.BackgroundCalls(workers=1, failed_ttl=0.3)
    with pytest.raises(TimeoutError, match="own timeout"):
        pool.get("k", failing, wait=2)
    with pytest.raises(TimeoutError):  # kept: a rerun on every click does not ask again
        pool.get("k", failing)
    assert len(calls) == 1
    time.sleep(0.4)
    with pytest.raises(TimeoutError):
        pool.get("k", failing, wait=2)
    assert len(calls) == 2  # asked anew once the failure is old


def test_background_calls_answer_pending_at_once_while_a_call_runs():
    gate = threading.Event()
    pool = background.BackgroundCalls(workers=1)
    t0 = time.monotonic()
    assert isinstance(pool.get("k", lambda: gate.wait(5) and "ranking", wait=0.05), background.Pending)
    assert time.monotonic() - t0 < 1 and not pool.done("k")
    gate.set()
    assert pool.get("k", lambda: "asked again", wait=2) == "ranking" and pool.done("k")
