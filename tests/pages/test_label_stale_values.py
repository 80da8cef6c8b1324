"""AppTest: a rerun the browser asked for with the values of an older page writes nothing it did not show.

The browser sends every control's value with each rerun it asks for, also a rerun asked for before the last
run's page had reached it: a click, or a fragment's timer (the dense index's progress note ticks every 2 s
on a first start). Grade controls once had a key of their place alone (`cand-1-grade`); such a request then
met controls that held other documents, and Streamlit called their callbacks with the old values: in
Chromium, a grade 0 given on question 1 was written on question 2's document, and two clicks on a first start
were lost. Here the stale request is sent as it was: the widget values of the earlier page, run again
(`AppTest._run` with an earlier tree's states, what a browser's rerun message carries).
"""
from __future__ import annotations

from browser_support import app_home, grade_card, grade_control, open_app, sample_embeddings, unanswerable_button  # noqa: F401
from test_label_page import add_question, card_ids, handbook, rewrite  # noqa: F401

from labeler_storage.store import open_store


def grades(qid: str) -> dict[str, int]:
    return {j.doc_id: j.grade for j in open_store().judgments.list(query_id=qid)}


def with_grades_of(old, at, *, grades=None):
    """The widget states a browser sends from page `old`: its grade controls' values (or `grades`, widget states)
    as they were there, the other controls' as they are now (the question picker's label has changed: a ✓)."""
    if grades is None:
        grades = [w._widget_state for w in old.segmented_control if "grade" in (w.key or "")]
    states = at._tree.get_widget_states()
    kept = [w for w in states.widgets if w.id not in {g.id for g in grades}]
    del states.widgets[:]
    states.widgets.extend(kept + grades)
    return states


def test_label_values_of_the_previous_question_never_grade_the_next_one(app_home):
    at = add_question(open_app(annotator="asha"))
    first = card_ids(at)
    grade_card(at, 0, 3)
    grade_card(at, 1, 0)
    assert grades("q-0001") == {first[0]: 3, first[1]: 0}
    q1_page = at._tree.get_widget_states()  # what the browser holds while question 1 is on screen

    add_question(at, "What is the office policy on keeping pet snakes at my desk?", "policy-lookup")
    assert not grades("q-0002")
    at._run(q1_page)  # a rerun asked for before question 2's page had reached the browser
    assert not at.exception, at.exception
    assert grades("q-0002") == {}, "question 1's values were written on question 2's documents"
    assert grades("q-0001") == {first[0]: 3, first[1]: 0}


def test_label_a_click_on_a_card_the_answer_re_filled_grades_the_document_clicked(app_home):
    at = add_question(open_app(annotator="asha"))
    before = card_ids(at)
    page_seen = at._tree  # the page the annotator reads and clicks on
    grade_card(at, 0, 3)  # its answer re-orders the ungraded cards below (most likely relevant first)
    after = card_ids(at)
    n = next(i for i in range(1, len(before)) if after[i] != before[i])  # a card now holding another document

    grade_control(page_seen, "cand-0").set_value(3)  # the browser holds the click it sent
    grade_control(page_seen, f"cand-{n}").set_value(0)  # and a second one on the old page, before the answer came
    at._run(with_grades_of(page_seen, at))
    assert not at.exception, at.exception
    assert grades("q-0001") == {before[0]: 3, before[n]: 0}, f"the grade went to {after[n]}, now at card {n + 1}"


def test_label_mark_unanswerable_clicked_on_the_previous_question_never_marks_the_next_one(app_home):
    at = add_question(open_app(annotator="asha"))
    add_question(at, "What is the office policy on keeping pet snakes at my desk?", "policy-lookup")
    at.button(key="prev-question").click().run()  # on question 1
    q1_page = at._tree
    at.button(key="next-question").click().run()  # N: question 2 is drawn ...
    mark = unanswerable_button(q1_page).click()  # ... while the browser still shows question 1, and X is clicked
    at._run(with_grades_of(q1_page, at, grades=[mark._widget_state]))
    assert not at.exception, at.exception
    # The click names question 1's button: it marks question 1 (while Streamlit still holds that button's
    # callback) or nothing; never question 2, which the server had moved to.
    assert not open_store().questions.status("q-0002").votes_unanswerable("asha"), \
        "a click on question 1's page marked question 2"


def _queue_docs(tree, docs) -> list[str]:
    """The documents of the Re-check queue's items, in the order the page lists them (each heading names one)."""
    headings = [m.value for m in tree.markdown if "your grade" in m.value and "since you judged it" in m.value]
    return [next(d for d in docs if f" · {d} · " in h) for h in headings]


def _confirms(tree) -> list:
    return [b for b in tree.button if b.key.startswith("recheck-") and b.key.endswith("-confirm")]


def test_label_a_second_recheck_click_before_the_first_answer_acts_on_the_item_clicked(app_home, handbook):
    at = add_question(open_app(annotator="asha"))
    docs = card_ids(at)[:3]
    for n in range(3):
        grade_card(at, card_ids(at).index(docs[n]), 3)
    rewrite(handbook, {d: lambda text: "Rewritten: " + text for d in docs})
    at.run()
    at.button(key="recheck-toggle").click().run()
    assert not at.exception, at.exception
    page_seen = at._tree  # three items to re-check: the annotator confirms the first two, quickly
    queue = _queue_docs(page_seen, docs)
    assert sorted(queue) == sorted(docs)
    _confirms(at)[0].click().run()  # the first: its item leaves the queue, the others move up
    assert not at.exception, at.exception
    _confirms(page_seen)[1].click()  # the second, on the page as the browser still shows it
    at._run(page_seen.get_widget_states())
    assert not at.exception, at.exception
    assert {j.doc_id for j in open_store().judgments.stale()} == {queue[2]}, "the second click confirmed another item"


def test_label_a_click_sent_before_a_switch_of_collection_never_grades_the_other_collection(app_home):
    at = add_question(open_app(annotator="asha"))  # q-0001 of the default collection
    open_store().questions.add("How many vacation days do I get?", query_id="q-0001", collection="other")
    at.run()
    doc = card_ids(at)[0]
    click = grade_control(at, "cand-0").set_value(2)._widget_state  # on the default collection's card
    at.selectbox(key="collection_switch").set_value("other").run()
    assert not at.exception, at.exception
    at._run(with_grades_of(None, at, grades=[click]))  # heard after the switch's run
    assert not at.exception, at.exception
    assert open_store().judgments.list(query_id="q-0001", collection="other") == [], "graded in a collection not shown"
    assert [(j.doc_id, j.grade) for j in open_store().judgments.list(query_id="q-0001")] == [(doc, 2)]  # where given


def test_label_an_empty_grade_sent_with_a_key_press_clears_nothing(app_home):
    """A card the browser showed empty over a saved grade (its value dropped by a run cut short: N, then at
    once a grade click on the page N was leaving) sent that emptiness with the next key: a J cleared the grade
    in the database, the annotator's own, unseen. Found by a Chromium probe (6 of 10 tries); here the message
    is sent as the browser sent it: the card's value empty and the J's button pressed, in one rerun."""
    at = add_question(open_app(annotator="asha"))
    first = card_ids(at)
    grade_card(at, 0, 2)
    grade_card(at, 1, 1)
    assert grades("q-0001") == {first[0]: 2, first[1]: 1}
    grade_control(at, "cand-1").set_value(None)
    at.button(key="focus-next").click().run()
    assert not at.exception, at.exception
    assert grades("q-0001") == {first[0]: 2, first[1]: 1}
    assert grade_control(at, "cand-1").value == 1  # drawn again with its saved grade
    grade_card(at, 1, None)  # a click on the selected grade, alone, still clears it
    assert grades("q-0001") == {first[0]: 2}


def test_label_an_empty_grade_sent_with_a_click_on_another_card_clears_nothing(app_home):
    """The same empty card, its emptiness sent with a grade click on another card: that click is saved, the
    grade the card did not show is kept."""
    at = add_question(open_app(annotator="asha"))
    first = card_ids(at)
    grade_card(at, 0, 2)
    grade_card(at, 1, 1)
    grade_control(at, "cand-1").set_value(None)
    grade_control(at, "cand-2").set_value(3).run()
    assert not at.exception, at.exception
    got = grades("q-0001")
    assert got[first[0]] == 2 and got[first[1]] == 1 and list(got.values()).count(3) == 1, got
