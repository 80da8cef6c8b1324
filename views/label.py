"""Label: write a question, grade pooled candidates 0-3, add documents by keyword, mark unanswerable.

Every click is written at once (app.label.grade); session state holds only UI cursors. The
question cursor and the annotator live in the URL, so a reload shows the same question.
"""
from __future__ import annotations

import streamlit as st

from app import label as lb
from app import workspace as ws
from app.access import Can
from labeler.text import inert
from views._cards import (
    candidate_card, demo_offer_box, keyboard_bar, new_question_form, question_picker, start_question,
)
from views import _keyboard as kb
from views._common import Keys, act, actor, flash, guard, show_flash
from views._loaders import keyword_hits, pooled, workspace

st.title("Label", anchor=False)
s, path, corp, ret = workspace()
show_flash()


def _load_demo() -> None:
    summary = act(ws.load_demo_golden, s, me, corp, path)
    if summary:
        flash(f"Loaded {summary.n_questions} questions with {summary.n_judgments} judgments.", "success")
        st.session_state[Keys.QUESTION] = s.question_index()[0].query_id


me = actor()
index = guard(s.question_index)  # read once per rerun: the demo offer, picker and progress share it
ids = [x.query_id for x in index]
if ws.demo_offer(path, len(index)) and me.can(Can.IMPORT_GOLDEN):
    demo_offer_box(_load_demo)
if not me.name:
    st.info("Type your name under **Annotator** in the sidebar to start labelling: every grade is saved under it.")
    st.stop()
if read_only := not me.can(Can.GRADE):
    st.info(f"You are a **{me.role.value}**: you can read every question and its grades, but not add questions "
            "or grade.")


def _add_question() -> None:
    if not (st.session_state.get("new_question") or "").strip():
        return flash("Write the question first.", "warning")
    qid = act(lb.add_question, s, corp, me, st.session_state.get("new_question") or "",
              st.session_state.get("new_question_type") or "")
    if qid:
        st.session_state.update({Keys.QUESTION: qid, Keys.FOCUS: 0, "new_question": "", "new_question_type": None})


def _move_question(step: int) -> None:
    i = ids.index(st.session_state.get(Keys.QUESTION)) if st.session_state.get(Keys.QUESTION) in ids else 0
    st.session_state.update({Keys.QUESTION: ids[max(0, min(len(ids) - 1, i + step))], Keys.FOCUS: 0})


if not read_only:
    new_question_form(lb.query_types(index), _add_question)
if not index:
    st.info("No questions yet: write the first one above. Candidates from dense and BM25 retrieval appear below it.")
    st.stop()

mine = guard(s.judged_by, me.name)  # this annotator's own progress and starting question
start_question(Keys.QUESTION, ids, lb.first_unfinished(index, mine))
question_picker(Keys.QUESTION, {x.query_id: lb.question_choice_label(x.query_id, x.status, x.question) for x in index},
                _move_question)

status = guard(s.question_status, st.session_state[Keys.QUESTION])
if status is None:  # deleted by someone else between the index read and this one
    st.info("That question was just deleted. Pick another one above.")
    st.stop()
question, qid = status.question, status.question.query_id
options = st.columns([2, 2, 5], vertical_alignment="center")
shuffle = options[0].toggle("Shuffle candidates", key="shuffle", help="A stable random order per question, "
                            "so the retrievers' ranking does not bias your grades.")
mark = not question.unanswerable
options[1].button("Mark unanswerable" if mark else "Unmark unanswerable", key="unanswerable",
                  on_click=act, args=(lb.set_unanswerable, s, me, qid, mark), disabled=not me.can(Can.GRADE),
                  help="No document in the corpus answers this question." if mark else None)
views = lb.candidate_views(corp, pooled(path, question.question), status, me.name, shuffle=shuffle)
progress = lb.label_progress(index, views, mine)
options[2].progress(progress.share, text=progress.text)

st.subheader(inert(question.question), anchor=False)
st.markdown(lb.status_line(status), unsafe_allow_html=True)
if question.unanswerable:
    st.warning(lb.UNANSWERABLE_NOTE)


def _grade(doc_id: str, grade: int | None, advance: bool = False) -> None:
    kb.grade(s, me, qid, views, doc_id, grade, advance)


def _move_focus(step: int) -> None:
    kb.move_focus(max(0, min(len(views) - 1, st.session_state.get(Keys.FOCUS, 0) + step)))


focus = st.session_state[Keys.FOCUS] = min(st.session_state.get(Keys.FOCUS, 0), max(len(views) - 1, 0))
if views:
    keyboard_bar(focus, len(views), views[focus].doc_id, _grade, _move_focus, unanswerable=question.unanswerable,
                 read_only=read_only, on_undo=(kb.undo, s, me) if Keys.UNDO in st.session_state else None)
st.subheader(f"Candidates ({len(views)})", anchor=False)
for i, view in enumerate(views):
    candidate_card(view, i + 1, f"cand-{i}", _grade, focused=i == focus, unanswerable=question.unanswerable,
                   read_only=read_only)
kb.show_focus(focus) if views else None

st.subheader("Find another document", anchor=False)
query = st.text_input("Search the corpus by keyword or document id", key="keyword",
                      placeholder="e.g. parental leave, or leave-004")
if query.strip():
    hits, note = lb.other_hits(keyword_hits(path, query, question.question), views)
    if note:
        st.caption(note)
    for i, hit in enumerate(hits):
        candidate_card(hit, i + 1, f"hit-{i}", _grade, focused=False, unanswerable=question.unanswerable,
                       read_only=read_only)
