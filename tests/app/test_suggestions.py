"""Machine grades as suggestions on the Label page (issue 23, item 5): never shown to an annotator before
their own grade unless the team allows it, the first sight recorded with their grade then, and the
post-edit figures per judge; on real stores."""
from __future__ import annotations

import pytest

from conftest import sqlite_only
from labeler.candidates import Candidate
from labeler.corpus import Corpus, Document
from labeler.errors import InputError
from labeler_app import label as lb
from labeler_app import suggestions as sg
from labeler_app.access import Actor, Role, local_actor

ADMIN = local_actor("boss")
ASHA = Actor("asha", Role.ANNOTATOR, team=True)
BEN = Actor("ben", Role.ANNOTATOR, team=True)
VIEWER = Actor("vic", Role.VIEWER, team=True)
CORPUS = Corpus([Document(f"d{i}", f"Title {i}", f"text of document {i}") for i in range(5)])


def _setup(store, *, mode: str = "after") -> str:
    """One question; judge `umb` graded d0 (3), d1 (0), d2 (2); judge `emb` graded d0 (1); d3, d4 ungraded."""
    qid = store.questions.add("Which document?", author="boss").query_id
    store.accounts.set_setting("suggestions", mode, by="boss")
    store.machine.save_grades([dict(query_id=qid, doc_id=d, grade=g, judge=j, at="2026-01-01T00:00:00Z")
                               for j, d, g in (("umb", "d0", 3), ("umb", "d1", 0), ("umb", "d2", 2), ("emb", "d0", 1))])
    return qid


def _views(store, actor, qid):
    pooled = [Candidate(f"d{i}", {"bm25": i + 1}) for i in range(5)]
    views, _ = lb.judging_views(store, actor, CORPUS, pooled, store.questions.status(qid))
    return {v.doc_id: v for v in sg.with_suggestions(views, sg.question_suggestions(store, qid), actor)}


def _shown(view) -> list[tuple[str, int]]:
    return [(s.judge, s.grade) for s in view.suggestions]


@sqlite_only
def test_with_suggestions_hides_a_grade_until_the_annotator_has_graded_the_pair(store):
    qid = _setup(store, mode="after")
    views = _views(store, ASHA, qid)
    assert all(v.suggestions == () for v in views.values())  # nothing shown before her own grade
    assert [d for d, v in views.items() if v.suggested] == ["d0", "d1", "d2"]
    lb.grade(store, ASHA, qid, "d0", 2, CORPUS, shown=views["d0"])
    views = _views(store, ASHA, qid)
    assert _shown(views["d0"]) == [("emb", 1), ("umb", 3)]  # now shown: both judges, by name
    assert views["d1"].suggestions == () and views["d2"].suggestions == ()
    assert _views(store, BEN, qid)["d0"].suggestions == ()  # her grade opens nothing to Ben
    assert _shown(_views(store, VIEWER, qid)["d1"]) == [("umb", 0)]  # who may not grade sees them


@sqlite_only
def test_with_suggestions_shows_them_before_the_grade_when_the_team_allows_and_none_when_off(store):
    qid = _setup(store, mode="before")
    assert _shown(_views(store, ASHA, qid)["d2"]) == [("umb", 2)]
    store.accounts.set_setting("suggestions", "off", by="boss")
    views = _views(store, VIEWER, qid)
    assert all(v.suggestions == () and not v.suggested for v in views.values())


@sqlite_only
def test_with_suggestions_leaves_out_a_grade_whose_document_changed(store):
    qid = _setup(store, mode="before")
    store.collections.ensure(corpus=CORPUS)  # a corpus version: the grades above name no content hash, so stale
    assert all(not v.suggested for v in _views(store, ASHA, qid).values())


def test_grade_records_the_first_sight_and_post_edit_counts_kept_changed_up_and_down(store):
    qid = _setup(store, mode="before")
    views = _views(store, ASHA, qid)
    lb.grade(store, ASHA, qid, "d0", 3, CORPUS, shown=views["d0"])  # umb 3 kept; emb 1 changed up
    lb.grade(store, ASHA, qid, "d1", 1, CORPUS, shown=views["d1"])  # umb 0 changed up
    lb.grade(store, ASHA, qid, "d2", 1, CORPUS, shown=views["d2"])  # umb 2 changed down
    lb.grade(store, ASHA, qid, "d3", 2, CORPUS, shown=views["d3"])  # no suggestion: nothing recorded
    views = _views(store, ASHA, qid)
    lb.grade(store, ASHA, qid, "d2", 2, CORPUS, shown=views["d2"])  # regraded to the machine's: now kept
    store.accounts.set_setting("suggestions", "after", by="boss")
    ben = _views(store, BEN, qid)
    lb.grade(store, BEN, qid, "d0", 3, CORPUS, shown=ben["d0"])  # blind: agrees with umb, not with emb
    lb.grade(store, BEN, qid, "d1", 2, CORPUS, shown=ben["d1"])  # blind: disagrees with umb ...
    lb.grade(store, BEN, qid, "d1", 0, CORPUS, shown=_views(store, BEN, qid)["d1"])  # ... revised after seeing
    figures = sg.post_edit(store)
    umb, emb = figures["umb"], figures["emb"]
    assert (umb.seen, umb.post_edited, umb.kept, umb.changed_up, umb.changed_down) == (5, 3, 2, 1, 0)
    assert (umb.blind, umb.agreed, umb.revised) == (2, 1, 1)
    assert (emb.seen, emb.post_edited, emb.kept, emb.changed_up, emb.changed_down, emb.blind, emb.agreed) == \
        (2, 1, 0, 1, 0, 1, 0)
    # kappa (umb, post-edited): (human, machine) = (3, 3), (1, 0), (2, 2): p_o = 2/3; marginals human
    # {3, 1, 2}, machine {3, 0, 2}, one each: p_e = (0 + 0 + 1 + 1) / 9 = 2/9; kappa = (2/3 - 2/9) / (7/9) = 4/7
    assert umb.kappa_post_edit == pytest.approx(4 / 7)
    # blind (umb): (3, 3), (2, 0): p_o = 1/2, p_e = (1 * 1) / 4 (grade 3 on both sides) = 1/4: (1/4) / (3/4)
    assert umb.kappa_blind == pytest.approx(1 / 3)
    assert sg.post_edit(store, "emb").keys() == {"emb"}


@sqlite_only
def test_with_machine_graded_adds_the_pairs_a_judge_graded_that_no_retriever_pooled(store):
    qid = _setup(store, mode="after")
    found = sg.question_suggestions(store, qid)
    joined = sg.with_machine_graded([Candidate("d1", {"bm25": 1}), Candidate("d4", {"bm25": 2})], found)
    assert [(c.doc_id, c.found_by) for c in joined] == [
        ("d1", {"bm25": 1}), ("d4", {"bm25": 2}), ("d0", {sg.MACHINE_BADGE: 1}), ("d2", {sg.MACHINE_BADGE: 2})]
    store.accounts.set_setting("suggestions", "off", by="boss")
    assert sg.with_machine_graded(joined[:2], sg.question_suggestions(store, qid)) == joined[:2]


@sqlite_only
def test_suggestions_setting_refuses_an_unknown_mode(store):
    with pytest.raises(InputError, match="after, before, off"):
        store.accounts.set_setting("suggestions", "sometimes", by="boss")
