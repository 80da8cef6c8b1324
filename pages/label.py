"""Label: write a question, grade pooled candidates 0-3, add documents by keyword, mark unanswerable.

Every click is written at once (labeler_app.label.grade); session state holds only UI cursors. The
question cursor and the annotator live in the URL, so a reload shows the same question.
"""
from __future__ import annotations

import streamlit as st

from labeler_app import stores as db
from labeler_app import label as lb
from labeler_app import workspace as ws
from labeler_app.access import Can
from labeler_app.systems import saved_systems
from labeler_pages._cards import (begin_grade_run, demo_offer_box, new_question_form, new_question_keys, question_added,
                                  question_picker, start_question)
from labeler_pages._collections import open_demo
from labeler_pages._common import HOLES_PARAM, Keys, act, actor, flash, guard, show_flash
from labeler_pages._judging import judging
from labeler_pages._keyboard import SCROLL_PENDING, key_queue
from labeler_pages._loaders import workspace
from labeler_pages._recheck import recheck_section
from labeler_pages._work_queue import claim_bar, next_for_me_button

key_queue()  # first thing on the page: a key pressed while it loads, or during any later run, is kept
begin_grade_run()  # a run cut short before the cards still counts as one that did not draw them
heading, new_box = st.columns([5, 2], vertical_alignment="center")
heading.title("Label", anchor=False)
s, path, corp, _ = workspace(with_retriever=False)  # candidates come from the judging area (BM25 first on a big corpus)
show_flash()


me = actor()
index = guard(db.question_index, s)  # read once per rerun: the demo offer, picker and progress share it
ids = [x.query_id for x in index]
if not index and ws.demo_offer(path, s.collection) and me.can(Can.IMPORT_GOLDEN):
    demo_offer_box(lambda: open_demo(s, me, corp, path))
if not me.name:
    st.info("Type your name under **Annotator** in the sidebar to start labelling: every grade is saved under it.")
    st.stop()
if read_only := not me.can(Can.GRADE):
    st.info(f"You are a **{me.role.value}**: you can read every question and its grades, but not add questions "
            "or grade.")


def _add_question() -> None:
    keys = new_question_keys()
    if not (text := st.session_state.get(keys.text) or "").strip():
        return flash("Write the question first.", "warning")
    if qid := act(lb.add_question, s, corp, me, text, st.session_state.get(keys.query_type) or ""):
        question_added()  # the form folds away and the first candidate has the focus: the next keys grade it
        st.session_state.update({Keys.QUESTION: qid, Keys.FOCUS: 0, SCROLL_PENDING: True})


def _move_question(step: int) -> None:
    i = ids.index(st.session_state.get(Keys.QUESTION)) if st.session_state.get(Keys.QUESTION) in ids else 0
    st.session_state.update({Keys.QUESTION: ids[max(0, min(len(ids) - 1, i + step))], Keys.FOCUS: 0})


if (holes_run := st.query_params.get(HOLES_PARAM)) and holes_run.isdigit():  # from the Evaluate page's link
    st.session_state[Keys.HOLES] = int(holes_run)
systems = list(guard(saved_systems, s))
if st.session_state.get(Keys.EXTRA_SYSTEM) not in systems:  # deleted since it was picked
    st.session_state.pop(Keys.EXTRA_SYSTEM, None)
if systems:
    st.sidebar.selectbox("Also pool candidates from", systems, index=None, key=Keys.EXTRA_SYSTEM,
                         placeholder="dense and BM25 only", help="A saved search system's top 10 join the candidates.")
recheck_section(s, me, corp, read_only)
if not read_only:  # a popover beside the title once questions exist: the candidates must be in view on arrival
    new_question_form(lb.query_types(index), _add_question, within=new_box if index else None)
if not index:
    st.info("No questions yet: write the first one above. Candidates from dense and BM25 retrieval appear below it.")
    st.stop()


start_question(Keys.QUESTION, ids, lambda: lb.first_unfinished(index, guard(db.judged_by, s, me.name)))
question_picker(Keys.QUESTION, {x.query_id: lb.question_choice_label(x.query_id, x.status, x.question) for x in index},
                _move_question, extra=None if read_only else next_for_me_button(s, me, corp))

qid = st.session_state[Keys.QUESTION]
if not read_only:
    claim_bar(s, me, corp, qid)
judging(s, me, qid, next(x.status for x in index if x.query_id == qid), path, corp, index, read_only)
