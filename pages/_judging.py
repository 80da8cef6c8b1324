"""The Label page's judging area: one question's header, progress, keyboard bar, candidate cards
and document search, as a fragment. A grade click (or a key) reruns only this area, not the
page: the click costs what it changes. When a click changes what the rest of the page shows —
the question's status (its mark in the picker, the team's counts) or the question itself
(undo on another question) — the fragment asks for a whole-page rerun."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from labeler.candidates import with_ranking
from labeler.corpus import Corpus
from labeler.status import Status
from labeler_app import stores as db
from labeler_app import judging_order as jo
from labeler_app import label as lb
from labeler_app.access import Actor, Can
from labeler_app.stores import QuestionSummary, Store
from labeler_app.text import inert
from labeler_pages import _keyboard as kb
from labeler_pages._cards import (begin_grade_run, candidate_card, grade_widget, keyboard_bar, question_widget,
                                  settle_echoes)
from labeler_pages._common import Keys, act, fragment_run, guard, guarded, show_flash
from labeler_pages._holes import holes_bar
from labeler_pages._loaders import bm25_pooled, dense_status, judging_features, keyword_hits, pooled, run_holes
from labeler_pages._order import arranged, find_more_button, found, order_control, spread_note, stopping_note
from labeler_pages._pooling import system_ranks
from labeler_pages._preview import metric_preview
from labeler_pages._restart import refuse_unsaved, show_unsaved
from labeler_pages._suggestion import with_machine_graded, with_suggestions

DENSE_WAITED = "dense_waited"


@st.fragment(run_every=2)
def _dense_watch(path: str) -> None:
    """While the dense index builds, say how far it is, anew every 2 s (documents embedded, time
    left); when it is ready, rerun the page with dense candidates."""
    building = dense_status(path, wait=False)
    if building is None:
        st.rerun(scope="app")
    st.info(lb.building_note(building.text))


@st.fragment
def judging(*args) -> None:
    """Everything below the question picker (see `_judging`); an unexpected error inside the
    fragment is handled as on the page (Streamlit would otherwise catch it inside the fragment)."""
    guarded(_judging, *args)


def _judging(s: Store, me: Actor, qid: str, page_status: Status, path: str, corp: Corpus,
             index: Sequence[QuestionSummary], read_only: bool) -> None:
    """Everything below the question picker, for question `qid` (whose status the page showed as `page_status`)."""
    if fragment_run():  # a whole-page run began its list at the page's top
        begin_grade_run()
    settle_echoes()  # a control's value sent back from before an undo showed is no click
    show_flash()  # what a click inside this area said (a fragment rerun does not redraw the page's top)
    status = guard(db.question_status, s, qid)
    if status is None:  # deleted by someone else between the index read and this one
        st.info("That question was just deleted. Pick another one above.")
        return
    if status.status != page_status or st.session_state.get(Keys.QUESTION) != qid:
        st.rerun(scope="app")  # the picker's marks and the counts above change too
    question = status.question
    show_unsaved(qid)  # grades a restart (or a late click) kept from being saved, until graded again
    options = st.columns([2, 2, 5], vertical_alignment="center")
    mode = order_control(options[0])
    mine = status.votes_unanswerable(me.name)
    mark = not mine
    options[1].button("Mark unanswerable" if mark else "Unmark unanswerable",
                      key=question_widget("unanswerable", s.collection, qid),
                      on_click=act, args=(lb.set_unanswerable, s, me, qid, mark), disabled=not me.can(Can.GRADE),
                      shortcut="X",
                      help="Your judgment: no document in the corpus answers this question. Others "
                           "judge it for themselves." if mark else "Withdraw your own mark.")
    building = dense_status(path, wait=not st.session_state.get(DENSE_WAITED))
    st.session_state[DENSE_WAITED] = building is not None  # while it builds, later reruns never block on it
    if building is None:
        candidates = pooled(path, question.question)
    else:  # a big corpus being embedded: label with BM25 now, dense candidates join when ready
        candidates = bm25_pooled(path, question.question)
        _dense_watch(path)  # the note, kept up to date
    if extra := st.session_state.get(Keys.EXTRA_SYSTEM):  # the sidebar's "Also pool from"
        candidates = with_ranking(candidates, extra, system_ranks(extra, question.question, me))
    candidates = with_machine_graded(s, qid, candidates)  # a judge's pairs no retriever pooled (its doubts)
    if (run_id := st.session_state.get(Keys.HOLES)) is not None:
        holes = run_holes(s, run_id)
        candidates = with_ranking(candidates, holes.badge, holes.ranks(qid), first=True)
        holes_bar(holes, qid)
        mode = "retriever" if mode == "active" else mode  # the holes are what this pass judges: they stay first
    features = stop = None
    if not read_only:  # the judging model and the stopping estimate read this annotator's own grades
        features = judging_features(path, question.question, dense=building is None)
        stop = jo.stopping(status, me.name, features.doc_ids)
        graded = jo.my_grades(status, me.name)
    views, hidden = guard(lb.judging_views, s, me, corp, candidates, status, shuffle=mode == "shuffle")
    if stop is not None:
        beyond = jo.extra_views(corp, status, me.name, [*found(qid), *stop.sample], views, hidden=hidden,
                                shuffle=mode == "shuffle")
        views = jo.mark([*views, *beyond], found(qid), stop.sample)
        if mode == "active":
            views = arranged(qid, views, graded, features, show_model=not hidden,
                             first=stop.sample if stop.estimate is None else ())
    if hidden or mode == "shuffle":  # no rank to anchor on before the grade
        views = jo.without_ranks(views)
    views = with_suggestions(s, me, qid, views)  # a machine judge's grade, once it may show
    progress = lb.label_progress(index, views, guard(db.judged_by, s, me.name))
    options[2].progress(progress.share, text=progress.text)

    st.subheader(inert(question.question), anchor=False)
    st.markdown(lb.status_line(status, hidden=hidden, candidates=[v.doc_id for v in views]))
    for kind, note in lb.unanswerable_notes(status, me.name, hidden=hidden):
        (st.warning if kind == "warning" else st.info)(note)
    if not hidden:  # blind judging: the retrievers' scores would bias the judge until the question is finished
        metric_preview(qid, status, candidates, ["dense", "bm25"] + ([extra] if extra else []))
    if stop is not None and stop.knee_at is not None:  # the sample to judge, or the estimate: above the cards
        stopping_note(stop)

    def grade(doc_id: str, value: int | None, advance: bool = False) -> None:
        kb.grade(s, me, qid, views, doc_id, value, advance, corp)

    def move_focus(step: int) -> None:
        kb.move_focus(max(0, min(len(views) - 1, st.session_state.get(Keys.FOCUS, 0) + step)))

    focus = st.session_state[Keys.FOCUS] = min(st.session_state.get(Keys.FOCUS, 0), max(len(views) - 1, 0))
    if views:
        keyboard_bar(focus, len(views), views[focus].doc_id, grade, move_focus, unanswerable=mine,
                     read_only=read_only, on_undo=(kb.undo, s, me, corp) if Keys.UNDO in st.session_state else None)
    for i, view in enumerate(views):
        candidate_card(view, i + 1, f"cand-{i}", grade, collection=s.collection, qid=qid, focused=i == focus,
                       unanswerable=mine, read_only=read_only)
    if views:
        kb.show_focus(focus, reorders=mode == "active" and stop is not None,
                      ticket=None if read_only else kb.grade_ticket(s, me, qid, views, corp))
    if stop is not None and stop.knee_at is None:  # until the knee, a line under the cards (the first card stays in view)
        stopping_note(stop)
    if features is not None:
        find_more_button(qid, features, graded, [v.doc_id for v in views])
        spread_note(s, me, qid, index, status)

    st.subheader("Find another document", anchor=False)
    query = st.text_input("Search the corpus by keyword or document id", key="keyword",
                          placeholder="e.g. parental leave, or leave-004")
    hits = []
    if query.strip():
        hits, note = lb.other_hits(keyword_hits(path, query, question.question), views)
        if note:
            st.caption(note)
        for i, hit in enumerate(hits):
            candidate_card(hit, i + 1, f"hit-{i}", grade, collection=s.collection, qid=qid, focused=False,
                           unanswerable=mine, read_only=read_only)
    def widget(v) -> str:
        return grade_widget(s.collection, qid, v.doc_id)

    refuse_unsaved([*((f"card {i + 1}", widget(v), v) for i, v in enumerate(views)),
                    *((f"search result {i + 1}", widget(v), v) for i, v in enumerate(hits))],
                   qid=qid, collection=s.collection, doc_ids=corp.doc_ids, saved=lambda: guard(db.my_grades, s, me.name))
