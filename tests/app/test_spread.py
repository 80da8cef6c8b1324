"""Where judging is likely to find more (labeler_app.spread): the Label page's hint reads the annotator's own
grades, waits for FLOOR of them here, and names the question with the best claim on the next visit."""
from __future__ import annotations

from labeler_app.access import Actor, Role, local_actor
from labeler_app.spread import FLOOR, VISIT, better_elsewhere

IDS = ["q1", "q2", "q3", "q4"]


def _grade(store, qid, relevant, n=FLOOR, annotator="alice"):
    for i in range(n):
        store.judgments.set(qid, f"{qid}-d{i}", 2 if i < relevant else 0, annotator=annotator)


def _questions(store):
    for qid in IDS:
        store.questions.add(f"question {qid}?", query_id=qid)


def test_spread_waits_for_the_floor_then_sends_to_a_question_not_graded_yet(store):
    _questions(store)
    me = local_actor("alice")
    _grade(store, "q1", 0, n=FLOOR - 1)
    assert better_elsewhere(store, me, "q1", IDS) is None  # under the floor here: nothing to say yet
    _grade(store, "q1", 0)
    there = better_elsewhere(store, me, "q1", IDS)
    assert there.query_id == "q2" and there.there is None and there.there_judged == 0 and there.here == 0
    assert "not graded yet" in there.note and "found nothing relevant" in there.note


def test_spread_names_the_question_whose_last_visit_found_most(store):
    _questions(store)
    me = local_actor("alice")
    _grade(store, "q1", 1)
    _grade(store, "q2", 4)
    _grade(store, "q3", 0)
    _grade(store, "q4", 9, annotator="bob")  # a colleague's grades count for nothing here
    _grade(store, "q4", 2)
    there = better_elsewhere(store, me, "q1", IDS)
    assert (there.query_id, there.here, there.there) == ("q2", 1, 4)
    assert f"your last {VISIT} found 4" in there.note
    assert better_elsewhere(store, me, "q2", IDS) is None  # the best place already


def test_spread_in_a_team_names_only_questions_the_annotator_graded(store):
    _questions(store)
    me = Actor("alice@example.org", Role.ANNOTATOR, team=True)
    _grade(store, "q1", 0, annotator=me.name)
    assert better_elsewhere(store, me, "q1", IDS) is None  # q2..q4 are the work queue's to hand out
    _grade(store, "q3", 3, n=4, annotator=me.name)
    there = better_elsewhere(store, me, "q1", IDS)
    assert there.query_id == "q3" and there.there is None and there.there_judged == 4
    assert "4 of its first" in there.note


def test_spread_passes_over_a_question_only_voted_unanswerable(store):
    _questions(store)
    me = local_actor("alice")
    _grade(store, "q1", 0)
    store.questions.set_unanswerable("q2", True, by="alice")
    assert better_elsewhere(store, me, "q1", IDS).query_id == "q3"
