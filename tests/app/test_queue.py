"""App layer of the work queue and of blind judging: "Next question for me", the lease renewed by a grade,
per-annotator progress, and what the Label page shows of others while I have not finished a question."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from labeler_app import golden_set as gs
from labeler_app import label
from labeler_app.access import Actor, Role
from labeler_app.accounts import TEAM_ENV
from labeler_app.blind import blind_judging
from browser_support import app_home, sample_embeddings, unanswerable_button  # noqa: F401 - fixtures
from conftest import rows
from labeler.candidates import Candidate
from labeler.corpus import parse_jsonl_corpus
from labeler_storage import open_store

ANN = Actor("ann@example.org", Role.ANNOTATOR, team=True)
BOB = Actor("bob@example.org", Role.ANNOTATOR, team=True)
CAT = Actor("cat@example.org", Role.ANNOTATOR, team=True)
TINY = "\n".join(json.dumps({"doc_id": f"d{i}", "title": f"Doc {i}", "text": f"vacation days policy number {i}"})
                 for i in range(1, 5))
POOL = [Candidate("d1", {"bm25": 1}), Candidate("d2", {"bm25": 2})]


@pytest.fixture
def store(db_url):
    s = open_store(db_url, synchronous="NORMAL")
    s.questions.add("How many vacation days?", query_id="q1")
    s.questions.add("What is the policy?", query_id="q2")
    yield s
    s.close()


CORPUS = parse_jsonl_corpus(TINY, source="tiny.jsonl")


def _views(store, actor, blind=True):
    store.accounts.set_setting("blind", blind)
    status = store.questions.status("q1")
    return status, label.judging_views(store, actor, CORPUS, POOL, status)[0]


def test_blind_judging_is_on_in_team_mode_unless_the_team_says_otherwise(store, monkeypatch):
    assert blind_judging(store) is False  # the local app: one person, nothing to hide
    monkeypatch.setenv(TEAM_ENV, "1")
    assert blind_judging(store) is True
    store.accounts.set_setting("blind", False)
    assert blind_judging(store) is False
    monkeypatch.delenv(TEAM_ENV)
    store.accounts.set_setting("blind", True)
    assert blind_judging(store) is True


def test_blind_hides_others_grades_votes_and_added_documents_until_i_finish(store):
    label.grade(store, BOB, "q1", "d1", 0)
    label.grade(store, BOB, "q1", "d3", 3)  # found by bob's search: not in the pool
    label.set_unanswerable(store, CAT, "q1", True)
    label.grade(store, ANN, "q1", "d1", 2)  # ann graded 1 of the 2 candidates: not finished
    status, views = _views(store, ANN)
    assert [(v.doc_id, v.grade, dict(v.others)) for v in views] == [("d1", 2, {}), ("d2", None, {})]
    assert label.hides_others(views, status, ANN.name)
    assert label.unanswerable_notes(status, ANN.name, hidden=True) == [("info", label.BLIND_NOTE)]
    label.grade(store, ANN, "q1", "d2", 0)  # every candidate graded: finished
    status, views = _views(store, ANN)
    assert not label.hides_others(views, status, ANN.name)
    assert [(v.doc_id, dict(v.others)) for v in views] == [
        ("d1", {BOB.name: 0}), ("d2", {}), ("d3", {BOB.name: 3})]
    notes = label.unanswerable_notes(status, ANN.name)
    assert any(n.startswith("Marked unanswerable by cat") for _, n in notes)


def test_marking_unanswerable_finishes_the_question_for_me(store):
    label.grade(store, BOB, "q1", "d1", 2)
    label.set_unanswerable(store, ANN, "q1", True)
    status, views = _views(store, ANN)
    assert not label.hides_others(views, status, ANN.name)
    assert views[0].others == {BOB.name: 2}


def test_without_blind_judging_others_show_at_once(store):
    label.grade(store, BOB, "q1", "d1", 1)
    _, views = _views(store, ANN, blind=False)
    assert views[0].others == {BOB.name: 1}


def test_next_for_me_claims_and_a_grade_renews_the_lease(store):
    clock = [datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)]
    store.clock = lambda: clock[0]
    store.accounts.set_setting("overlap", 2)
    label.grade(store, BOB, "q2", "d1", 1)
    assert label.next_for_me(store, ANN) == "q2"  # closest to done: bob judged it already
    clock[0] += timedelta(minutes=25)
    label.grade(store, ANN, "q2", "d1", 2)  # 09:25 + 30 min
    assert rows(store, "SELECT annotator, expires_at FROM claims") == [(ANN.name, "2026-12-01T09:55:00Z")]
    assert label.next_for_me(store, ANN) == "q1"  # q2 is judged by me now
    assert label.next_for_me(store, CAT) == "q1"
    assert label.next_for_me(store, BOB) is None  # q1: ann and cat hold its 2 seats; q2: judged by bob


def test_progress_rows_per_annotator(store):
    label.grade(store, ANN, "q1", "d1", 2)
    label.grade(store, ANN, "q2", "d1", 0)
    label.grade(store, BOB, "q2", "d2", 1)
    assert gs.progress_rows(store) == [
        # 2 judgments in the last 8 h: 2 / 8 = 0.25 per hour, shown to one decimal
        {"annotator": ANN.name, "questions judged": 2, "judgments": 2, "judgments / hour (last 8 h)": 0.2},
        {"annotator": BOB.name, "questions judged": 1, "judgments": 1, "judgments / hour (last 8 h)": 0.1}]


def test_label_page_next_question_for_me_button(app_home):
    from browser_support import open_app, texts

    s = open_store()
    s.questions.add("How many vacation days?", query_id="q-a")
    s.questions.add("Who approves travel?", query_id="q-b")
    s.judgments.set("q-b", "leave-001", 1, annotator="ben")  # q-b is closest to done (overlap 2)
    s.accounts.set_setting("overlap", 2)
    at = open_app(annotator="asha")
    assert at.session_state["q"] == "q-a"  # where asha starts: her first unfinished question
    at.button(key="next-for-me").click().run()
    assert not at.exception, at.exception
    assert at.session_state["q"] == "q-b" and s.queue.claims() == {"q-b": ["asha"]}
    cat = open_app(annotator="cat")
    cat.button(key="next-for-me").click().run()
    assert cat.session_state["q"] == "q-a"  # q-b's 2 seats: ben's judgment, asha's claim
    dan = open_app(annotator="dan")
    s.accounts.set_setting("overlap", 1)
    dan.button(key="next-for-me").click().run()
    assert any("No question needs another judge" in m for m in texts(dan.info))
    s.close()


def test_label_page_gives_a_claimed_question_back(app_home):
    from browser_support import open_app, texts

    s = open_store()
    for qid in ("q-a", "q-b", "q-c"):
        s.questions.add(f"Question {qid}?", query_id=qid)
    s.accounts.set_setting("overlap", 1)
    at = open_app(annotator="asha")
    assert not [b for b in at.button if b.key == "give-back"]  # no claim held: nothing to give back
    at.button(key="next-for-me").click().run()
    assert at.session_state["q"] == "q-a"
    assert any(c.startswith("You hold this question in the queue until") for c in texts(at.caption))
    at.button(key="give-back").click().run()
    assert not at.exception, at.exception
    assert at.session_state["q"] == "q-b" and s.queue.claims() == {"q-b": ["asha"]}
    assert any("Gave q-a back to the queue; here is q-b." in m for m in texts(at.success))
    ben = open_app(annotator="ben")
    ben.button(key="next-for-me").click().run()
    assert ben.session_state["q"] == "q-a"  # the seat asha gave back
    s.close()


def test_label_page_blind_judging_hides_others_until_i_mark_the_question(app_home):
    from browser_support import open_app, texts

    s = open_store()
    s.accounts.set_setting("blind", True)
    s.questions.add("Can I keep a pet snake at my desk?", query_id="q-a")
    ben = open_app(annotator="ben")
    first = next(m.value for m in ben.markdown if "<small><code>" in m.value).split("<small><code>")[1].split("<")[0]
    s.judgments.set("q-a", first, 2, annotator="ben")
    s.questions.set_unanswerable("q-a", by="cat")
    asha = open_app(annotator="asha")
    cards = [m.value for m in asha.markdown if "<small><code>" in m.value]
    assert cards and not any("others:" in c for c in cards)  # ben's grade is hidden
    assert any("Blind judging" in i for i in texts(asha.info))
    assert not any("Marked unanswerable by" in i for i in texts(asha.info))  # and cat's mark
    unanswerable_button(asha).click().run()  # finished for asha: now she sees the others
    assert any("others: ben: 2" in m.value for m in asha.markdown)
    assert any("Also marked unanswerable by cat" in i for i in texts(asha.info))
    s.close()


def test_team_page_sets_overlap_and_blind_judging(app_home, monkeypatch):
    from test_team_pages import sign_in, start

    monkeypatch.setenv(TEAM_ENV, "1")
    s = open_store()
    s.accounts.add_user("boss@example.org", "admin", password="a long enough password")
    at = sign_in(start(), "boss@example.org")
    at.switch_page("../pages/team.py").run()
    assert at.toggle(key="set_blind").value is True  # unset: on in team mode
    at.number_input(key="set_overlap").set_value(3)
    at.toggle(key="set_blind").set_value(False)
    at.button(key="FormSubmitter:team-settings-Save settings").click().run()
    assert not at.exception, at.exception
    assert (s.accounts.settings()["overlap"], s.accounts.settings()["blind"]) == (3, False)
    assert blind_judging(s) is False
    s.close()


def test_blind_judging_hides_others_grades_on_the_golden_set_page_and_its_downloads(store):
    from labeler.errors import AccessDenied

    label.grade(store, BOB, "q1", "d1", 3)
    label.grade(store, ANN, "q1", "d2", 0)
    store.accounts.set_setting("blind", True)
    admin, viewer = Actor("boss@example.org", Role.ADMIN, team=True), Actor("v@example.org", Role.VIEWER, team=True)
    full = gs.overview(store)
    seen = gs.for_actor(full, store, ANN)
    q1 = next(r for r in seen.rows if r["query_id"] == "q1")
    assert q1["labels"] == gs.HIDDEN and q1["annotators"] == gs.HIDDEN and q1["relevant"] is None
    assert seen.disagreements == () and seen.agreement == gs.HIDDEN
    assert [r["annotator"] for r in gs.grade_history_rows(store, "q1", ANN)] == [ANN.name]  # her own only
    with pytest.raises(AccessDenied, match="while the team judges blind"):
        gs.golden_downloads(store, ANN)
    for who in (admin, viewer):  # an adjudicator and a reader see everything
        assert gs.for_actor(full, store, who) == full and "jsonl" in gs.golden_downloads(store, who)
    store.accounts.set_setting("blind", False)
    assert gs.for_actor(full, store, ANN) == full
