"""AppTest: the Corpus page — what is open, the document browser, opening a bad path; and the
upload check behind it (nothing half-loaded is kept)."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from browser_support import app_home, open_app, sample_embeddings, texts  # noqa: F401 - fixtures

from labeler.errors import CorpusError
from labeler.paths import SAMPLE_CORPUS
from labeler_app.corpus import save_uploaded_corpus
from labeler_storage.store import open_store

PAGE = "../pages/corpus.py"



def tiny_corpus_root(tmp_path, monkeypatch):
    """A corpus root (LABELER_CORPUS_ROOTS) holding tiny.csv, two documents."""
    root = tmp_path / "corpora"
    root.mkdir()
    (root / "tiny.csv").write_text("id,title,text\na,Alpha,alpha text here\nb,Beta,beta text here\n",
                                   encoding="utf-8")
    monkeypatch.setenv("LABELER_CORPUS_ROOTS", str(root))
    return root

def test_corpus_page_shows_counts_model_index_and_browses(app_home):
    at = open_app(PAGE)
    values = {m.label: m.value for m in at.metric}
    assert values["Documents"] == "116" and values["Chunks"] == "116" and values["Index"] == "flat"
    assert "minilm" in values["Model"].lower()
    at.text_input(key="browse_query").input("it-security-007").run()
    assert list(at.dataframe[0].value["doc_id"]) == ["it-security-007"]
    at.selectbox(key="browse_doc").set_value("it-security-007").run()
    assert any("<img src=x onerror=alert(1)>" in t for t in texts(at.text))  # st.text: shown as text


@pytest.mark.parametrize("where", ["missing", "outside"])
def test_corpus_open_a_path_missing_or_outside_the_roots_says_the_same_and_keeps_the_corpus(app_home, tmp_path, where):
    outside = tmp_path / "secret.csv"
    outside.write_text("id,text\nsecret-id,secret text\n", encoding="utf-8")
    at = open_app(PAGE)
    at.text_input(key="open_path").input(str(tmp_path / "nope.jsonl" if where == "missing" else outside))
    at.button(key="open-path").click().run()
    assert not at.exception
    [error] = texts(at.error)
    assert error.startswith("no corpus at that path under the corpus roots") and "Hint:" in error
    assert "secret.csv" not in error and "secret-id" not in error and "nope" not in error
    assert open_store().collections.get().corpus_path == str(SAMPLE_CORPUS.resolve())


def test_corpus_open_another_path_asks_first_then_records_it(app_home, tmp_path, monkeypatch):
    root = tiny_corpus_root(tmp_path, monkeypatch)
    at = open_app(PAGE)
    at.text_input(key="open_path").input("tiny.csv")  # relative to the first root
    at.button(key="open-path").click().run()
    assert not at.exception, at.exception
    [question] = texts(at.warning)
    assert "(2 documents) for everyone" in question and "No document is judged yet" in question
    assert open_store().collections.get().corpus_path == str(SAMPLE_CORPUS.resolve())  # not yet
    at.button(key="confirm-open").click().run()
    assert not at.exception, at.exception
    assert any("2 documents" in m for m in texts(at.success))
    assert open_store().collections.get().corpus_path == str((root / "tiny.csv").resolve())
    again = open_app(PAGE)
    assert {m.label: m.value for m in again.metric}["Documents"] == "2"


def _where_the_index_is_built(at, monkeypatch):
    """Runs `at` with the page's retriever call marked by a progress bar where the call is made (the
    real bar sits there, inside the cached build); the page's elements in order, as (type, text)."""
    import streamlit as st

    import labeler_pages._loaders as loaders

    real = getattr(loaders.retriever, "__wrapped__", loaders.retriever)

    def marked(path, *args, **kwargs):
        st.progress(0.5, text="index build here")
        return real(path, *args, **kwargs)

    marked.__wrapped__ = real
    monkeypatch.setattr(loaders, "retriever", marked)
    at.run()
    assert not at.exception, at.exception
    said = ("subheader", "success", "error", "warning", "info")
    return [(el.type, el.proto.text if el.type == "progress" else el.value if el.type in said else "")
            for el in at.main]


def test_opening_a_corpus_shows_its_index_build_next_to_the_button_that_opened_it(app_home, tmp_path, monkeypatch):
    tiny_corpus_root(tmp_path, monkeypatch)
    at = open_app(PAGE)
    order = _where_the_index_is_built(at, monkeypatch)  # an ordinary visit: at the top, above the documents
    build = order.index(("progress", "index build here"))
    assert build < order.index(("subheader", "Documents"))
    at.text_input(key="open_path").input("tiny.csv")
    at.button(key="open-path").click().run()
    at.button(key="confirm-open").click()  # "Yes, open it" is at the bottom of the page ...
    order = _where_the_index_is_built(at, monkeypatch)  # ... so the new corpus's embedding shows there
    build = order.index(("progress", "index build here"))
    assert build > order.index(("subheader", "Open another corpus"))
    opened = next(i for i, (kind, text) in enumerate(order) if kind == "success" and "Opened " in text)
    assert order.index(("subheader", "Open another corpus")) < opened < build
    assert {m.label: m.value for m in at.metric}["Documents"] == "2"  # the counts at the top, once it is built
    order = _where_the_index_is_built(at, monkeypatch)  # and the next rerun is an ordinary one again
    assert order.index(("progress", "index build here")) < order.index(("subheader", "Documents"))


def test_uploaded_corpus_with_a_bad_line_names_file_and_line_and_keeps_nothing(app_home):
    data = b'{"doc_id": "a", "text": "fine"}\n{"doc_id": "a", "text": "again"}\n'
    with pytest.raises(CorpusError) as err:
        save_uploaded_corpus("mine.jsonl", data, home=app_home)
    assert str(err.value).startswith("mine.jsonl:2: duplicate document id")
    assert [p.name for p in (app_home / "corpora").iterdir()] == []


def test_uploaded_zip_of_text_files_is_kept_and_loads(app_home):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("notes/one.md", "# First\nbody one")
        zf.writestr("two.txt", "body two")
    path = save_uploaded_corpus("notes.zip", buf.getvalue(), home=app_home)
    from labeler.corpus import load_corpus

    assert sorted(load_corpus(path).doc_ids()) == ["notes/one.md", "two.txt"]


def test_uploaded_zip_escaping_its_folder_is_refused(app_home):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../evil.txt", "x")
    with pytest.raises(CorpusError, match="outside the archive"):
        save_uploaded_corpus("evil.zip", buf.getvalue(), home=app_home)
    assert not (Path(app_home).parent / "evil.txt").exists()


def test_corpus_browser_pages_through_every_document(app_home):
    at = open_app(PAGE)
    assert "1-50 of 116 documents · page 1 of 3" in texts(at.caption)
    at.number_input(key="browse_page").set_value(3).run()
    assert "101-116 of 116 documents · page 3 of 3" in texts(at.caption)
    assert len(at.dataframe[0].value) == 16
    at.text_input(key="browse_query").input("it-security-007").run()
    assert "1-1 of 1 matches · page 1 of 1" in texts(at.caption)  # a past-the-end page shows the last one
