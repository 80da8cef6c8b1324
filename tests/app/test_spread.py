"""Where judging is likely to find more (labeler_app.spread): the Label page's hint reads the annotator's own
grades, waits for FLOOR of them here, and names the question with the best claim on the next visit."""
from __future__ import annotations

from labeler_app.access import Actor, Role, local_actor
from labeler_app import spread

FLOOR, VISIT = spread.FLOOR, spread.VISIT

IDS = ["q1", "q2", "q3", "q4"]


def better_elsewhere(store, me, qid, ids):
    """The hint as the Label page asks for it: this question's figures from its status, the rest from the store."""
    here = spread.here_counts(store.questions.status(qid), me.name)
    return spread.better_elsewhere(me, qid, ids, spread.my_judging(store, me), here)


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
    # the store's window and the question's own sequence agree on every question
    mine = spread.my_judging(store, me)
    assert {q: spread.here_counts(store.questions.status(q), me.name) for q in IDS} == dict(mine.counts)


def test_spread_reads_the_last_visit_in_the_order_first_given(store):
    _questions(store)
    me = local_actor("alice")
    _grade(store, "q1", 0)
    for i in range(VISIT):  # q2: relevant first, then VISIT not relevant (of one second: by doc id, as the sequence)
        store.judgments.set("q2", f"early-{i}", 3, annotator="alice")
    _grade(store, "q2", 0)
    store.judgments.set("q2", "early-0", 0, annotator="alice")  # a regrade keeps its place in the order
    assert spread.my_judging(store, me).counts["q2"] == (2 * VISIT, 0)


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
