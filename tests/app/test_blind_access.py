"""Blind judging on every page, like tests/app/test_access.py for writes: each page's app-layer reads that
could show who graded what, called directly (no page) as an annotator who has not finished the
question, one who has, an admin and a viewer, with the team judging blind and not (on both engines).

Expected, written out by hand from app/blind.py's docstring: an annotator sees others' grades on the
Label page once they have finished the question, and on the Golden set and Adjudicate pages (which
span every question) not at all while the team judges blind; admins and viewers read every page, but
an admin judging a question on the Label page is blind to it until they have finished it.
"""
from __future__ import annotations

import json

import pytest

from labeler.candidates import Candidate
from labeler.corpus import parse_jsonl_corpus
from labeler.errors import AccessDenied
from labeler_app import adjudicate as adj
from labeler_app import golden_set as gs
from labeler_app import label
from labeler_app.access import Actor, Role
from labeler_storage import open_store

ANN = Actor("ann@example.org", Role.ANNOTATOR, team=True)  # graded one of the two candidates: not finished
BOB = Actor("bob@example.org", Role.ANNOTATOR, team=True)  # graded both: finished
ADMIN = Actor("boss@example.org", Role.ADMIN, team=True)  # judged nothing
VIEWER = Actor("vic@example.org", Role.VIEWER, team=True)
CORPUS = parse_jsonl_corpus("\n".join(json.dumps({"doc_id": f"d{i}", "title": f"Doc {i}", "text": f"policy {i}"})
                                      for i in (1, 2)), source="tiny.jsonl")
POOL = [Candidate("d1", {"bm25": 1}), Candidate("d2", {"bm25": 2})]


@pytest.fixture
def store(db_url):
    s = open_store(db_url, synchronous="NORMAL")
    s.questions.add("How many vacation days?", query_id="q1")
    label.grade(s, ANN, "q1", "d1", 3)
    label.grade(s, BOB, "q1", "d1", 0)  # d1 is disputed: 3 and 0
    label.grade(s, BOB, "q1", "d2", 1)
    yield s
    s.close()


def label_page(store, actor):
    """Label: the grades of others on the candidate cards."""
    views, _ = label.judging_views(store, actor, CORPUS, POOL, store.questions.status("q1"))
    return {name for v in views for name in v.others}


def golden_set_page(store, actor):
    """Golden set: the labels and annotators columns, the disagreements, the grade history."""
    view = gs.for_actor(gs.overview(store), store, actor)
    history = {r["annotator"] for r in gs.grade_history_rows(store, "q1", actor)} - {actor.name}
    shown = {r["annotators"] for r in view.rows if r["annotators"] != gs.HIDDEN} - {"", actor.name}
    return shown | {json.dumps(d, sort_keys=True, default=str) for d in view.disagreements} | history


def golden_downloads(store, actor):
    """Golden set: the downloads (everyone's consensus)."""
    return set(gs.golden_downloads(store, actor))


def adjudicate_page(store, actor):
    """Adjudicate: the queue (every grade with who gave it) and the agreement figures."""
    queue = {name for d in adj.disputes(store, actor) for name in d.grades}
    return queue | {r["statistic"] for r in adj.agreement_view(store, actor, n_resamples=5).rows()}


READS = {"label": label_page, "golden set": golden_set_page, "downloads": golden_downloads,
         "adjudicate": adjudicate_page}
# read -> the actors to whom it shows others' grades under blind judging (written by hand, see the docstring)
BLIND = {"label": {BOB, VIEWER}, "golden set": {ADMIN, VIEWER}, "downloads": {ADMIN, VIEWER},
         "adjudicate": {ADMIN, VIEWER}}


@pytest.mark.parametrize("read", READS)
@pytest.mark.parametrize("who", [ANN, BOB, ADMIN, VIEWER], ids=["unfinished", "finished", "admin", "viewer"])
@pytest.mark.parametrize("blind", [True, False], ids=["blind", "open"])
def test_each_read_shows_others_grades_only_to_whom_blind_judging_allows(store, read, who, blind):
    store.accounts.set_setting("blind", blind)
    try:
        shown = READS[read](store, who)
    except AccessDenied as exc:
        assert "blind" in str(exc) and "Hint:" in str(exc)
        shown = set()
    assert bool(shown) == (not blind or who in BLIND[read]), shown


def test_the_label_page_says_hidden_exactly_when_it_hides(store):
    store.accounts.set_setting("blind", True)
    status = store.questions.status("q1")
    assert label.judging_views(store, ANN, CORPUS, POOL, status)[1] is True
    assert label.judging_views(store, BOB, CORPUS, POOL, status)[1] is False
    views, hidden = label.judging_views(store, ADMIN, CORPUS, POOL, status)
    assert hidden and not any(v.others for v in views)  # an admin judging is blind too, until finished
