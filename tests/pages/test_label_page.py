"""AppTest: the Label page's states — first start, no annotator, no questions, grading, search, errors."""
from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from browser_support import app_home, card_grade, card_grades_offered, grade_card, grade_control, open_app, sample_embeddings, submit_question, texts, unanswerable_button  # noqa: F401 - fixtures

from labeler.paths import SAMPLE_CORPUS
from labeler_pages._cards import new_question_keys
from labeler_storage.store import open_store

QUESTION = "How many vacation days do new employees get?"


def add_question(at, text: str = QUESTION, query_type: str = "numeric-fact"):
    submit_question(at, text, query_type)
    assert not at.exception, at.exception
    return at


def card_ids(at) -> list[str]:
    """The doc ids the candidate cards show, in order (each card's markdown names it in <code>)."""
    import html

    return [html.unescape(m.value.split("<small><code>")[1].split("</code>")[0])
            for m in at.markdown if "<small><code>" in m.value]


def candidate_doc(at, n: int) -> str:
    """The doc id candidate card n shows."""
    return card_ids(at)[n]


def test_label_first_start_opens_sample_corpus_and_offers_demo(app_home):
    at = open_app()
    assert at.button(key="load-demo")
    assert any("Annotator" in m for m in texts(at.info))
    coll = open_store().collections.get()
    assert coll.corpus_path == str((SAMPLE_CORPUS).resolve())  # recorded on first start


def test_label_no_questions_yet_explains_what_to_do(app_home):
    at = open_app(annotator="asha")
    assert any("No questions yet" in m for m in texts(at.info))


def test_label_load_demo_golden_set_opens_it_in_its_own_collection(app_home):
    at = open_app(annotator="asha")
    at.button(key="load-demo").click().run()
    assert not at.exception
    assert any("Opened the demo golden set in its own collection, 'demo'" in m and "62 new" in m
               for m in texts(at.success))
    assert at.query_params["set"] == "demo" and at.selectbox(key="collection_switch").value == "demo"
    assert at.session_state["q"] == "q-0001"
    assert not [b for b in at.button if b.key == "load-demo"]  # offered only to an empty collection
    with open_store() as s:
        assert s.questions.index() == [] and len(s.questions.index(collection="demo")) == 62
    at.selectbox(key="collection_switch").set_value("default").run()  # back to the user's own (empty) collection
    assert not at.exception and "set" not in at.query_params
    assert at.button(key="load-demo")


def test_label_grade_click_is_saved_at_once_and_survives_a_new_session(app_home):
    at = add_question(open_app(annotator="asha"))
    doc0 = candidate_doc(at, 0)
    assert "dense #" in at.markdown[0].value or any("dense #" in m.value for m in at.markdown)
    grade_card(at, 0, 3)
    doc1 = candidate_doc(at, 1)  # most likely relevant first: the cards after a grade are ordered anew
    grade_card(at, 1, 0)
    assert not at.exception
    grades = {j.doc_id: (j.grade, j.annotator) for j in open_store().judgments.list(query_id="q-0001")}
    assert grades == {doc0: (3, "asha"), doc1: (0, "asha")}

    again = open_app(annotator="asha")  # a new session: nothing comes from session state
    shown = card_ids(again)
    assert card_grade(again, shown.index(doc0)) == 3
    assert card_grade(again, shown.index(doc1)) == 0
    assert shown[0] == doc0  # the pool's first: a graded card is where the pool has it
    assert any("You: 1 / 1 questions judged" in p.proto.text for p in again.get("progress"))


def test_label_clear_removes_only_my_grade(app_home):
    at = add_question(open_app(annotator="asha"))
    grade_card(at, 0, 2)
    grade_card(at, 0, None)
    assert open_store().judgments.list(query_id="q-0001") == []


def test_label_keyword_search_adds_a_document_no_retriever_found(app_home):
    at = add_question(open_app(annotator="asha"))
    shown = {candidate_doc(at, i) for i in range(len(card_ids(at)))}
    target = next(d for d in ("onboarding-001", "travel-001", "payroll-001") if d not in shown)
    at.text_input(key="keyword").input(target).run()
    grade_control(at, "hit-0").set_value(2).run()
    assert not at.exception
    grades = {j.doc_id: j.grade for j in open_store().judgments.list(query_id="q-0001")}
    assert grades == {target: 2}
    n = len(card_ids(at))
    assert target in [candidate_doc(at, i) for i in range(n)]  # now a candidate of the question
    assert any(":green-badge[added]" in m.value for m in at.markdown)


def test_label_keyboard_bar_grades_the_focused_candidate_and_moves_on(app_home):
    at = add_question(open_app(annotator="asha"))
    at.button(key="focus-next").click().run()
    assert at.session_state["focus"] == 1
    at.button(key="key-grade-2").click().run()
    assert {j.doc_id: j.grade for j in open_store().judgments.list()} == {candidate_doc(at, 1): 2}
    assert at.session_state["focus"] == 2


def test_label_mark_unanswerable_refused_while_a_document_is_relevant(app_home):
    at = add_question(open_app(annotator="asha"))
    grade_card(at, 0, 2)
    unanswerable_button(at).click().run()
    assert not at.exception
    assert any("you graded documents of question" in e for e in texts(at.error))
    assert not open_store().questions.get("q-0001").unanswerable


def test_label_unanswerable_question_disables_relevant_grades(app_home):
    at = add_question(open_app(annotator="asha"), "Can I keep a pet snake at my desk?", "policy-lookup")
    unanswerable_button(at).click().run()
    assert open_store().questions.get("q-0001").unanswerable
    assert card_grades_offered(at, 0) == ["0 · Not relevant"]
    assert any("unanswerable" in w for w in texts(at.warning))


def test_label_shuffle_keeps_the_candidates_in_another_stable_order(app_home):
    at = add_question(open_app(annotator="asha"))
    n = len(card_ids(at))
    at.selectbox(key="judging_order").set_value("retriever").run()
    ranked = [candidate_doc(at, i) for i in range(n)]
    at.selectbox(key="judging_order").set_value("shuffle").run()
    mixed = [candidate_doc(at, i) for i in range(n)]
    assert sorted(mixed) == sorted(ranked) and mixed != ranked
    at.run()
    assert [candidate_doc(at, i) for i in range(n)] == mixed
    cards = [m.value for m in at.markdown if "<small><code>" in m.value]
    assert cards and not any("dense #" in c or "BM25 #" in c or "model #" in c for c in cards)  # no rank to anchor on
    grade_card(at, 0, 2)
    first = next(m.value for m in at.markdown if "**1." in m.value)
    assert "dense #" in first or "BM25 #" in first  # shown once graded
    # A reload keeps it: it is in the URL (and the older ?shuffle=1 still opens it).
    assert at.query_params["order"] in ("shuffle", ["shuffle"])
    from streamlit.testing.v1 import AppTest

    from browser_support import APP
    for params in ({"order": "shuffle"}, {"shuffle": "1"}):
        reloaded = AppTest.from_file(str(APP), default_timeout=120)
        reloaded.session_state["annotator"] = "asha"
        reloaded.query_params.update({"q": "q-0001", **params})
        reloaded.run()
        assert reloaded.selectbox(key="judging_order").value == "shuffle"
        assert [candidate_doc(reloaded, i) for i in range(n)] == mixed  # the same stable order
    at.selectbox(key="judging_order").set_value("active").run()
    assert "order" not in at.query_params  # the default


def test_label_previous_next_move_between_questions(app_home):
    at = add_question(open_app(annotator="asha"))
    at = add_question(at, "Who approves travel?", "policy-lookup")
    assert at.session_state["q"] == "q-0002"
    at.button(key="prev-question").click().run()
    assert at.session_state["q"] == "q-0001"
    at.button(key="next-question").click().run()
    assert at.session_state["q"] == "q-0002"


def test_label_corpus_error_is_shown_not_raised(app_home, tmp_path, monkeypatch):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "a", "text": "fine"}\n{"doc_id": "b", "text": \n', encoding="utf-8")
    monkeypatch.setenv("LABELER_CORPUS", str(bad))
    at = open_app(annotator="asha")
    errors = texts(at.error)
    assert errors and "bad.jsonl:2" in errors[0] and "Hint:" in errors[0]


def test_label_empty_question_is_refused_with_a_message(app_home):
    at = open_app(annotator="asha")
    submit_question(at)
    assert any("Write the question first" in w for w in texts(at.warning))
    assert open_store().questions.list() == []


def test_label_link_with_a_question_id_opens_it_and_survives_an_edit(app_home):
    from conftest import import_demo

    store = open_store()
    import_demo(store)
    from streamlit.testing.v1 import AppTest

    from browser_support import APP

    def open_link(query_id: str):
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.session_state["annotator"] = "asha"
        at.query_params["q"] = query_id
        return at.run()

    at = open_link("q-0003")
    assert not at.exception and at.session_state["q"] == "q-0003"
    assert at.query_params["q"] in ("q-0003", ["q-0003"])  # the id only, not the picker's label
    store.questions.edit("q-0003", text="An edited question?")
    for j in store.judgments.list(query_id="q-0003"):  # a status change too: graded relevant -> unanswerable
        store.judgments.clear("q-0003", j.doc_id, annotator=j.annotator)
    store.questions.set_unanswerable("q-0003", True, by="asha")
    again = open_link("q-0003")
    assert again.session_state["q"] == "q-0003"
    unknown = open_link("no-such-question")
    assert unknown.session_state["q"] == "q-0001"  # unknown: asha's first unfinished, and said so
    assert "There is no question no-such-question here (it was deleted, or the link is for another collection); " \
        "showing q-0001." in [html.unescape(w) for w in texts(unknown.warning)]  # markdown decodes the escapes
    assert not [w for w in texts(again.warning) if "There is no question" in w]


def test_label_search_for_a_listed_document_says_where_it_is(app_home):
    at = add_question(open_app(annotator="asha"))
    doc0 = candidate_doc(at, 0)
    at.text_input(key="keyword").input(doc0).run()
    assert f"Already among the candidates above: {doc0} (#1)." in texts(at.caption)
    at.text_input(key="keyword").input("zzzz-no-such-word").run()
    assert "No document matches every word." in texts(at.caption)


def test_label_progress_and_start_are_per_annotator(app_home):
    at = add_question(open_app(annotator="asha"))
    at = add_question(at, "Who approves travel?", "policy-lookup")
    grade_card(at, 0, 2)  # asha judges q-0002 only
    ben = open_app(annotator="ben")
    assert ben.session_state["q"] == "q-0001"  # ben starts at his first unfinished question
    [bar] = ben.get("progress")
    assert "You: 0 / 2 questions judged" in bar.proto.text and bar.proto.value == 0
    asha = open_app(annotator="asha")
    assert asha.session_state["q"] == "q-0001"  # asha has not judged q-0001 yet
    assert "You: 1 / 2 questions judged" in asha.get("progress")[0].proto.text


def test_keyboard_digit_grades_the_focused_card_and_jumps_to_the_next_ungraded_one(app_home):
    at = add_question(open_app(annotator="asha"))
    docs = [candidate_doc(at, i) for i in range(4)]
    store = open_store()

    def grades():
        return {j.doc_id: j.grade for j in store.judgments.list(annotator="asha")}

    grade_card(at, 1, 1)  # card #2 graded by a click: the focus follows it to the next ungraded card, #3
    assert at.session_state["focus"] == 2
    assert [candidate_doc(at, i) for i in range(2)] == docs[:2]  # the card graded and those above it stay put
    docs[2] = candidate_doc(at, 2)  # the cards after it are ordered anew (most likely relevant first)
    at.button(key="key-grade-2").click().run()  # #3 -> 2, on to #4
    assert grades() == {docs[1]: 1, docs[2]: 2} and at.session_state["focus"] == 3
    docs[3] = candidate_doc(at, 3)
    at.button(key="key-grade-0").click().run()  # #4 -> 0, on to #5
    at.button(key="focus-prev").click().run()  # K: back to #4
    at.button(key="key-grade-3").click().run()  # regrade #4; on to #5 (the next without a grade)
    assert grades() == {docs[1]: 1, docs[2]: 2, docs[3]: 3} and at.session_state["focus"] == 4
    at.button(key="undo-grade").click().run()  # U: #4 back to 0
    assert grades()[docs[3]] == 0 and any("Undone" in m for m in texts(at.success))
    # A click on #1 (never a key) moves the focus past the cards graded already, so J and a digit
    # pressed next cannot overwrite #2-#4; clearing a grade by click focuses that card.
    grade_card(at, 0, 3)
    assert at.session_state["focus"] == 4
    assert [candidate_doc(at, i) for i in range(4)] == docs  # graded cards never move
    at.button(key="focus-next").click().run()
    fifth = candidate_doc(at, 5)
    at.button(key="key-grade-1").click().run()
    assert grades() == {docs[0]: 3, docs[1]: 1, docs[2]: 2, docs[3]: 0, fifth: 1}
    grade_card(at, 2, None)
    assert at.session_state["focus"] == 2 and docs[2] not in grades()
    assert any("then the focus jumps to the next card you have not graded" in c.proto.help for c in at.caption)


def test_annotator_names_differing_in_case_or_spaces_are_one_annotator(app_home):
    at = add_question(open_app(annotator="Alice"))
    grade_card(at, 0, 2)
    again = open_app(annotator="  alice ")
    grade_card(again, 1, 1)
    assert {j.annotator for j in open_store().judgments.list()} == {"Alice"}  # shown as first typed
    assert "You: 1 / 1 questions judged" in again.get("progress")[0].proto.text


def test_label_unanswerable_is_each_annotators_own_mark(app_home):
    at = add_question(open_app(annotator="asha"), "Can I keep a pet snake at my desk?", "policy-lookup")
    unanswerable_button(at).click().run()
    ben = open_app(annotator="ben")
    ben.selectbox(key="q").select("q-0001").run() if ben.session_state["q"] != "q-0001" else None
    # ben sees asha's mark, keeps his grades and his own button; his progress does not count her mark.
    assert any("Marked unanswerable by asha. Judge it yourself" in i for i in texts(ben.info))
    assert "2 · Relevant" in card_grades_offered(ben, 0) and unanswerable_button(ben).label == "Mark unanswerable"
    assert "You: 0 / 1 questions judged" in ben.get("progress")[0].proto.text
    grade_card(ben, 0, 2)  # ben disagrees: a relevant document
    store = open_store()
    assert not store.questions.get("q-0001").unanswerable  # a vote never outweighs a relevant grade
    # Said to ben as his own grade; to asha, with what she can do about it.
    assert "Disagreement: you graded a document relevant, so the team's consensus is **answerable**, while asha " \
        "marked it unanswerable." in texts(ben.info)
    at.run()
    assert any("Disagreement: ben graded a document relevant" in i and "To disagree" in i for i in texts(at.info))  # asha's mark stands, and is hers alone
    assert unanswerable_button(at).label == "Unmark unanswerable" and "2 · Relevant" not in card_grades_offered(at, 0)
    unanswerable_button(at).click().run()
    assert store.questions.status("q-0001").voters == ()


def test_label_recheck_queue_after_the_corpus_changes(app_home, handbook):
    at = add_question(open_app(annotator="asha"))
    doc = candidate_doc(at, 0)
    grade_card(at, 0, 3)
    assert not banner(at)  # nothing changed yet
    rewrite(handbook, {doc: lambda text: "Rewritten: " + text})
    at.run()
    assert not at.exception, at.exception
    # One line, not the queue: the candidates stay in view.
    assert "1 of your grades rest on text that changed" in banner(at)
    assert not any(":green-background[Rewritten&#58;]" in m.value for m in at.markdown)
    assert not [b for b in at.button if b.key == "recheck-confirm-unchanged"]  # a word was added: a person decides
    at.button(key="recheck-toggle").click().run()
    assert any(":green-background[Rewritten&#58;]" in m.value for m in at.markdown)  # ":" made inert
    assert open_store().collections.versions()[0].diff.edited == (doc,)
    next(b for b in at.button if b.key.startswith("recheck-") and b.key.endswith("-confirm")).click().run()
    assert not at.exception and open_store().judgments.stale() == []
    assert any(f"Confirmed: your grade of {doc}" in m for m in texts(at.success)), (texts(at.success), texts(at.error), [e.label for e in at.expander])


def test_label_status_says_why_a_question_is_done(app_home):
    at = add_question(open_app(annotator="asha"))
    n = len(card_ids(at))
    assert any("new: nothing judged yet" in m.value for m in at.markdown)
    grade_card(at, 0, 0)
    assert any(f"started: 1 document judged by 1 annotator, none relevant yet; {n - 1} of {n} candidates unjudged"
               in m.value for m in at.markdown)
    grade_card(at, 1, 2)
    assert any(f"done: 1 relevant document (consensus grade ≥ 1) by 1 annotator; {n - 2} of {n} candidates unjudged"
               in m.value for m in at.markdown), [m.value for m in at.markdown][:6]


@pytest.fixture
def handbook(tmp_path, monkeypatch) -> Path:
    """A copy of the sample corpus the app reads (LABELER_CORPUS), for a test to edit."""
    corpus_file = tmp_path / "handbook.jsonl"
    corpus_file.write_text((SAMPLE_CORPUS / "corpus.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("LABELER_CORPUS", str(corpus_file))
    return corpus_file


def rewrite(corpus_file: Path, edits: dict) -> None:
    """Give each document in `edits` the text its function makes of the old one, and let the app look again."""
    import labeler_pages._loaders as loaders

    docs = [json.loads(line) for line in corpus_file.read_text(encoding="utf-8").splitlines()]
    for d in docs:
        if d["_id"] in edits:
            d["text"] = edits[d["_id"]](d["text"])
    corpus_file.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8")
    loaders.look_again()  # as if the 2 s between two looks at the disk had passed


def banner(at) -> str:
    """The Re-check line's text ("" when the page shows none)."""
    return " ".join(m.value for m in at.markdown if "Re-check]" in m.value)


def test_label_recheck_confirms_at_once_the_grades_whose_meaning_did_not_change(app_home, handbook):
    at = add_question(open_app(annotator="asha"))
    reflowed = candidate_doc(at, 0)
    grade_card(at, 0, 3)
    reworded = candidate_doc(at, 1)
    grade_card(at, 1, 2)
    rewrite(handbook, {reflowed: lambda text: text.upper().replace(" ", "  "), reworded: lambda text: "Never " + text})
    at.run()
    assert "2 of your grades rest on text that changed" in banner(at)
    at.button(key="recheck-confirm-unchanged").click().run()
    assert not at.exception, at.exception
    assert [(j.doc_id, j.reason) for j in open_store().judgments.stale()] == [(reworded, "edited")]
    assert any("Confirmed 1 grade whose document changed only in whitespace" in m for m in texts(at.success))
    assert "1 of your grades rest on text that changed" in banner(at)
    assert not [b for b in at.button if b.key == "recheck-confirm-unchanged"]


def test_label_new_question_folds_away_and_the_first_card_takes_the_keys(app_home):
    at = open_app(annotator="asha")
    assert not at.get("popover")  # no question yet: the form is on the page
    add_question(at)
    keys = new_question_keys(at.session_state)
    assert keys.box == "new-question-box-1"  # a new form, as a closed popover: the candidates are in view
    assert at.session_state[keys.box] is False and at.get("popover") and at.text_input(key=keys.text).value == ""
    assert at.session_state["focus"] == 0
    scripts = [h.proto.body for h in at.get("html") if "scrollIntoView" in h.proto.body]
    assert scripts and ".st-key-cand-0" in scripts[-1]  # scrolled to, so the next keys grade it
    assert unanswerable_button(at).proto.shortcut.lower() == "x"
    assert any("**X** unanswerable" in c and "**Esc** leaves a text box" in c for c in texts(at.caption))
    assert any("**X** mark unanswerable" in c.proto.help for c in at.caption)
    at.run()  # a rerun later: still folded, although questions were never added in this run
    assert at.session_state[keys.box] is False


def preview(at) -> str:
    return " ".join(c for c in texts(at.caption) if c.startswith("Preview on the grades so far"))


def test_label_metric_preview_moves_with_each_grade(app_home):
    at = add_question(open_app(annotator="asha"))
    at.selectbox(key="judging_order").set_value("retriever").run()  # card #1 is the pool's first
    assert preview(at) == ""  # nothing judged yet
    grade_card(at, 0, 0)
    assert preview(at) == ""  # nothing relevant yet: every number would be 0
    grade_card(at, 2, 3)
    first = preview(at)
    assert first.startswith("Preview on the grades so far (dense, BM25): first relevant ") and "nDCG@10 0." in first
    grade_card(at, 0, 2)  # the pool's first card relevant too: the numbers move
    assert preview(at) != first and "first relevant #1," in preview(at)


def test_label_metric_preview_hidden_under_blind_judging_until_finished(app_home):
    store = open_store()
    store.accounts.set_setting("blind", True)
    at = add_question(open_app(annotator="asha"))
    at.selectbox(key="judging_order").set_value("retriever").run()  # the pool first, the stopping sample after it
    grade_card(at, 0, 3)
    assert preview(at) == ""  # blind and not finished: the retrievers' scores would bias the judge
    for n in range(1, len(card_ids(at))):
        grade_card(at, n, 0)
    assert "first relevant" in preview(at)  # finished: shown
