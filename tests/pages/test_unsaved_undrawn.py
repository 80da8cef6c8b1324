"""A grade the browser sends for a grade control the server does not draw is named as not saved, never
dropped without a word. After a restart the old page's values reach a process whose pool may not hold
that document (one "Find more" brought in lives in the old session only); just after N a click on the
question left reaches a run that no longer draws its card. Streamlit keeps such a value for the run and
forgets it, calling nothing. Here a real server gets such values through the Streamlit protocol
(tests/streamlit_client.py), as the browser sends them."""
from __future__ import annotations

import re
import shutil

import pytest
from browser_support import AppServer, sample_embeddings  # noqa: F401
from streamlit_client import StreamlitSession

from labeler.corpus import load_corpus
from labeler.paths import SAMPLE_CORPUS
from labeler_app.text import inert
from labeler_pages._cards import grade_widget
from labeler_storage import open_store

QID, OTHER = "q-0001", "q-0002"


@pytest.fixture(scope="module")
def server(tmp_path_factory, sample_embeddings):  # noqa: F811
    """One local server for the module (its first page run loads the model); each test has its own collection."""
    home = tmp_path_factory.mktemp("undrawn")
    shutil.copytree(sample_embeddings, home / "cache")
    with pytest.MonkeyPatch.context() as env:  # AppServer copies the environment when it is made
        for name in ("LABELER_TEAM", "LABELER_DB_URL", "STREAMLIT_SECRETS_FILES"):
            env.delenv(name, raising=False)
        app = AppServer(home)
    app.wait_healthy()
    yield app, f"sqlite:///{home / 'labeler.db'}"
    app.stop()


@pytest.fixture
def served(server, request):
    """The database's URL, the collection, and a session on the Label page of its q-0001."""
    app, url = server
    collection = request.node.name[-40:]
    with open_store(url) as store:
        store.questions.add("How many vacation days do new employees get?", collection=collection, query_id=QID)
        store.questions.add("Can I work from home?", collection=collection, query_id=OTHER)
    session = StreamlitSession(app.url, query=f"q={QID}&set={collection}&annotator=busy", timeout=180)
    yield url, collection, session
    session.close()


def sent_id(collection: str, qid: str, doc: str) -> str:
    """The element id the browser holds for that grade control (Streamlit's: "$$ID-<hash>-<key>")."""
    return f"$$ID-0123456789abcdef-{grade_widget(collection, qid, doc)}"


def grades(url: str, collection: str) -> dict[tuple[str, str], int]:
    with open_store(url) as store:
        return {(j.query_id, j.doc_id): j.grade for j in store.judgments.list(annotator="busy", collection=collection)}


def undrawn(session) -> tuple[set[str], str]:
    """The documents the last run drew as cards, and one of the corpus it did not."""
    drawn = set(re.findall(r"<code>([^<]+)</code>", " ".join(session.last.texts)))
    assert drawn, session.last.texts
    return drawn, next(d.doc_id for d in load_corpus(SAMPLE_CORPUS).documents if d.doc_id not in drawn)


def test_a_grade_for_a_card_not_drawn_is_named_and_stays_named_until_dismissed(served):
    url, collection, session = served
    _, gone = undrawn(session)
    run = session.rerun(picks={sent_id(collection, QID, gone): ["2 · Relevant"]})
    assert run.says("Not saved"), [t for t in run.texts if "saved" in t]
    assert run.says(f"Not saved: 2 · Relevant on {inert(gone)} of question {inert(QID)}"), run.texts
    assert grades(url, collection) == {}  # named, not written: the card it was clicked on is not on the page
    assert session.rerun().says(f"on {inert(gone)} of question {inert(QID)}")  # still there on the next run
    # A click on a question this session never showed: no document to name, but named all the same.
    run = session.rerun(picks={sent_id(collection, OTHER, gone): ["1 · Partly"]})
    assert run.says("Not saved: a grade 1 · Partly clicked on a page no longer shown"), run.texts
    assert grades(url, collection) == {}
    run = session.rerun(trigger=run.widgets["Dismiss these notes"])
    assert not run.says("Not saved"), [t for t in run.texts if "saved" in t]


def test_a_value_the_server_saved_is_no_click_to_name(served):
    """The browser's values of another question's controls, as a rerun just after N carries them: saved, so no note."""
    url, collection, session = served
    drawn, gone = undrawn(session)
    with open_store(url) as store:
        store.judgments.set(OTHER, gone, 3, annotator="busy", collection=collection)
    run = session.rerun(picks={sent_id(collection, OTHER, gone): ["3 · Answers fully"],
                               sent_id(collection, QID, next(iter(drawn))): []})
    assert not run.says("Not saved"), run.texts
    assert gone not in undrawn(session)[0]  # the value met no control: the check above is the undrawn path's
