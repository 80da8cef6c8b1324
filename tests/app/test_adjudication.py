"""Adjudication: the queue of disputed documents, the final grade that outweighs the consensus in the
export, who may set it, and agreement before/after with bootstrap intervals (on both engines)."""
from __future__ import annotations

import pytest

from labeler_app import adjudicate as adj
from labeler_app.access import Actor, Role
from browser_support import app_home, sample_embeddings  # noqa: F401 - fixtures
from conftest import rows
from labeler.agreement_bootstrap import bootstrap_agreement, quantile
from labeler.errors import AccessDenied, InputError
from labeler.golden import GoldenQuery, GoldenSet
from labeler_storage import open_store

ANN = Actor("ann@example.org", Role.ANNOTATOR, team=True)
LEAD = Actor("lead@example.org", Role.ADMIN, team=True)


@pytest.fixture
def store(db_url):
    s = open_store(db_url, synchronous="NORMAL")
    s.questions.add("How many vacation days?", query_id="q1")
    s.questions.add("Who approves travel?", query_id="q2")
    for doc, a, b in (("d1", 2, 0),   # both sides of the relevance line: disputed
                      ("d2", 1, 2),   # spread 1, both relevant: not disputed
                      ("d3", 3, 1)):  # spread 2: disputed
        s.judgments.set("q1", doc, a, annotator="ann")
        s.judgments.set("q1", doc, b, annotator="bob")
    s.judgments.set("q2", "d1", 0, annotator="ann")
    s.judgments.set("q2", "d1", 0, annotator="bob")
    yield s
    s.close()


def test_the_queue_holds_the_disputed_documents_with_every_grade(store):
    items = adj.disputes(store, LEAD)
    assert [(d.query_id, d.doc_id, dict(d.grades), d.spread, d.splits_relevance) for d in items] == [
        ("q1", "d1", {"ann": 2, "bob": 0}, 2, True), ("q1", "d3", {"ann": 3, "bob": 1}, 2, False)]
    assert adj.dispute_rows(items)[0]["grades"] == "ann: 2, bob: 0"
    adj.adjudicate(store, LEAD, "q1", "d1", 1, "partly")
    rows = adj.dispute_rows(adj.disputes(store, LEAD))
    assert [r["final"] for r in rows] == ["", "1"]  # one type in the column: Arrow takes it as it is
    import pandas as pd
    import pyarrow as pa

    pa.Table.from_pandas(pd.DataFrame(rows))  # raised ArrowTypeError on a mixed column (Streamlit then logged it)


def test_imported_grades_are_no_one_in_the_queue(store):
    store.golden.import_set(GoldenSet((GoldenQuery("q3", "Who approves travel?", relevance={"d1": 3}),)))
    store.judgments.set("q3", "d1", 0, annotator="ann")
    store.judgments.set("q3", "d1", 0, annotator="bob")
    assert [d.doc_id for d in adj.disputes(store, LEAD)] == ["d1", "d3"]  # q3/d1: the people agree on 0


def test_the_adjudicated_grade_is_what_the_export_carries(store):
    assert store.golden.export().get("q1").relevance == {"d1": 1, "d2": 1, "d3": 2}  # floor of the medians
    adj.adjudicate(store, LEAD, "q1", "d1", 0, "  The page is about sick days.  ")
    exported = store.golden.export().get("q1")
    assert exported.relevance == {"d1": 0, "d2": 1, "d3": 2}
    said = exported.extra["adjudicated"]
    assert said == {"d1": {"grade": 0, "by": LEAD.name, "note": "The page is about sick days.", "at": said["d1"]["at"]}}
    assert "adjudicated" not in store.golden.export().get("q2").extra
    assert [(d.doc_id, d.final.grade) for d in adj.disputes(store, LEAD) if d.final] == [("d1", 0)]
    assert [d.doc_id for d in adj.disputes(store, LEAD, open_only=True)] == ["d3"]
    assert {(j.annotator, j.grade) for j in store.judgments.list(query_id="q1") if j.doc_id == "d1"} == {
        ("ann", 2), ("bob", 0)}  # the grades stay as given
    adj.adjudicate(store, LEAD, "q1", "d1", None, "")  # withdrawn: the consensus again
    assert store.golden.export().get("q1").relevance["d1"] == 1
    assert rows(store, "SELECT count(*) FROM adjudications") == [(0,)]


def test_adjudication_bumps_the_revision_and_goes_with_its_question(store):
    before = store.collections.revision()
    adj.adjudicate(store, LEAD, "q1", "d3", 3, "Answers it in full.")
    assert store.collections.revision() == before + 1
    store.questions.delete("q1")
    assert store.judgments.adjudications() == {}


def test_only_an_adjudicator_sets_a_final_grade_and_with_a_note(store):
    with pytest.raises(AccessDenied, match="is an annotator and may not adjudicate"):
        adj.adjudicate(store, ANN, "q1", "d1", 0, "mine")
    with pytest.raises(InputError, match="needs a note"):
        adj.adjudicate(store, LEAD, "q1", "d1", 0, "  ")
    with pytest.raises(InputError, match="one of 0-3"):
        adj.adjudicate(store, LEAD, "q1", "d1", 7, "why")
    with pytest.raises(InputError, match="no question 'q9'"):
        adj.adjudicate(store, LEAD, "q9", "d1", 0, "why")
    assert store.judgments.adjudications() == {}


def test_quantile_interpolates_between_order_statistics():
    # 0.25 * (5 - 1) = 1.0 -> the second value; 0.1 * 4 = 0.4 -> 1 + 0.4 * (2 - 1) = 1.4
    assert quantile([5, 1, 2, 3, 4], 0.25) == 2 and quantile([1, 2, 3, 4, 5], 0.1) == pytest.approx(1.4)
    assert quantile([], 0.5) is None


def test_bootstrap_is_seeded_and_brackets_the_value():
    ratings = {(f"q{i}", f"d{j}"): {"a": (i + j) % 4, "b": (i + j + (i % 3 == 0)) % 4} for i in range(12)
               for j in range(3)}
    one = bootstrap_agreement(ratings, n_resamples=200, seed=7)
    assert one == bootstrap_agreement(ratings, n_resamples=200, seed=7)  # same seed, same interval
    alpha = one.krippendorff_alpha
    assert alpha.low <= alpha.value <= alpha.high and alpha.low < alpha.high
    pair = one.pairs["a", "b"]
    assert pair.value == one.report.pairs[0].kappa and pair.low <= pair.value <= pair.high
    perfect = bootstrap_agreement({(f"q{i}", "d"): {"a": i % 4, "b": i % 4} for i in range(8)}, n_resamples=50)
    assert (perfect.krippendorff_alpha.low, perfect.krippendorff_alpha.high) == (1.0, 1.0)
    assert bootstrap_agreement({}).krippendorff_alpha.text() == "n/a"


def test_agreement_after_adjudication_counts_adjudicated_documents_as_agreed(store):
    before = adj.agreement_view(store, LEAD, n_resamples=50).before.krippendorff_alpha.value
    adj.adjudicate(store, LEAD, "q1", "d1", 1, "partly")
    adj.adjudicate(store, LEAD, "q1", "d3", 2, "mostly")
    view = adj.agreement_view(store, LEAD, n_resamples=50)
    assert view.before.krippendorff_alpha.value == before < view.after.krippendorff_alpha.value
    assert [r["statistic"] for r in view.rows()] == [
        "Fleiss' κ (items every annotator judged)", "Krippendorff's α (ordinal)", "Cohen's κ ann / bob"]



def adjudicate_page_with_one_dispute():
    """The Adjudicate page, as lead, over one question whose leave-001 ann graded 3 and bob 0."""
    from browser_support import open_app

    with open_store() as s:
        s.questions.add("How many vacation days?", query_id="q1")
        s.judgments.set("q1", "leave-001", 3, annotator="ann")
        s.judgments.set("q1", "leave-001", 0, annotator="bob")
    return open_app("../pages/adjudicate.py", annotator="lead")

def test_adjudicate_page_sets_a_final_grade(app_home):
    from browser_support import texts

    at = adjudicate_page_with_one_dispute()
    assert "Queue (1 open of 1)" in [h.value for h in at.subheader]
    at.radio(key="adjudicate_grade").set_value(2)
    at.text_input(key="adjudicate_note").input("States the number of days.")
    at.button(key="FormSubmitter:adjudicate-form-Set the final grade").click().run()
    assert not at.exception, at.exception
    assert any("Final grade 2 set for leave-001" in m for m in texts(at.success))
    with open_store() as s:
        said = s.golden.export().get("q1").extra["adjudicated"]
        assert said == {"leave-001": {"grade": 2, "by": "lead", "note": "States the number of days.",
                                      "at": said["leave-001"]["at"]}}
    assert "Queue (0 open of 1)" in [h.value for h in at.subheader]


def test_an_adjudicated_grade_decides_the_status_as_it_decides_the_export(store):
    from labeler.status import Status
    from labeler_app.label import status_line

    store.judgments.set("q2", "d2", 0, annotator="ann")
    store.judgments.set("q2", "d2", 2, annotator="bob")  # consensus floor(1) = 1: q2 is done
    assert store.questions.status("q2").status == Status.DONE
    adj.adjudicate(store, LEAD, "q2", "d2", 0, "About visas, not approval.")
    for status in (store.questions.index()[1].status, store.questions.status("q2").status,
                   next(s.status for s in store.questions.list() if s.question.query_id == "q2")):
        assert status == Status.STARTED
    assert [q.query_id for q in store.golden.export(complete_only=True).queries] == ["q1"]
    assert status_line(store.questions.status("q2")).endswith("· 1 document adjudicated")
    assert "adjudicated" not in status_line(store.questions.status("q2"), hidden=True)  # blind judging
    adj.adjudicate(store, LEAD, "q2", "d2", None, "")
    assert store.questions.index()[1].status == Status.DONE


def test_setting_a_final_grade_needs_a_grade_chosen_not_a_withdrawal(store):
    adj.adjudicate(store, LEAD, "q1", "d1", 1, "partly")
    with pytest.raises(InputError, match="no final grade chosen"):
        adj.set_final_grade(store, LEAD, "q1", "d1", None, "a note but no grade")
    assert store.judgments.adjudications()[("q1", "d1")].grade == 1  # None would have withdrawn it
    adj.set_final_grade(store, LEAD, "q1", "d3", 2, "mostly")
    assert store.judgments.adjudications()[("q1", "d3")].grade == 2


def test_adjudicate_page_preselects_no_grade_and_refuses_until_one_is_chosen(app_home):
    from browser_support import texts

    at = adjudicate_page_with_one_dispute()
    assert at.radio(key="adjudicate_grade").value is None  # no 0 to set by accident
    at.text_input(key="adjudicate_note").input("States the number of days.")
    at.button(key="FormSubmitter:adjudicate-form-Set the final grade").click().run()
    assert not at.exception, at.exception
    assert any("no final grade chosen" in e for e in texts(at.error))
    assert at.text_input(key="adjudicate_note").value == "States the number of days."  # kept for the retry
    with open_store() as s:
        assert s.judgments.adjudications() == {}
    at.radio(key="adjudicate_grade").set_value(0)
    at.button(key="FormSubmitter:adjudicate-form-Set the final grade").click().run()
    assert not at.exception, at.exception
    assert any("Final grade 0 set for leave-001" in m for m in texts(at.success))
    with open_store() as s:
        assert s.judgments.adjudications()[("q1", "leave-001")].grade == 0


def test_adjudicate_a_form_sent_from_an_older_queue_sets_nothing_and_says_so(app_home):
    """The form's submit carries the document picked on the page the browser showed. Sent before the answer
    to "Open only" came (the queue shown shrank meanwhile), it named a document no longer in the queue the
    server drew: a traceback, before. Replayed as AppTest: the older page's values, run again."""
    from browser_support import texts

    at = adjudicate_page_with_one_dispute()
    with open_store() as s:
        s.judgments.set("q1", "leave-002", 2, annotator="ann")
        s.judgments.set("q1", "leave-002", 0, annotator="bob")
    at.run()
    at.selectbox(key="adjudicate_pick").set_value("q1 · leave-001")
    at.radio(key="adjudicate_grade").set_value(2)
    at.text_input(key="adjudicate_note").input("States the number of days.")
    at.button(key="FormSubmitter:adjudicate-form-Set the final grade").click().run()
    at.toggle(key="adjudicate_open_only").set_value(False).run()
    assert "Queue (1 open of 2)" in [h.value for h in at.subheader]
    older = at._tree  # every document listed, the adjudicated one too
    at.toggle(key="adjudicate_open_only").set_value(True).run()  # the queue drawn now: leave-002 alone
    older.selectbox(key="adjudicate_pick").set_value("q1 · leave-001")
    older.radio(key="adjudicate_grade").set_value(3)
    older.text_input(key="adjudicate_note").input("Answers it fully.")
    older.button(key="FormSubmitter:adjudicate-form-Set the final grade").click()
    at._run(older.get_widget_states())
    assert not at.exception, at.exception
    assert any("Not saved: q1 · leave-001 is not in the queue shown now" in w for w in texts(at.warning))
    with open_store() as s:
        assert {k: a.grade for k, a in s.judgments.adjudications().items()} == {("q1", "leave-001"): 2}
