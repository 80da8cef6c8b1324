"""Label: write a question, grade pooled candidates 0-3, add documents by keyword, mark unanswerable.

Every click is written to the database at once (store.set_judgment); session state only holds
UI cursors (which candidate has the keyboard focus). The question cursor and the annotator
live in the URL, so a reload shows the same question for the same person.
"""
from __future__ import annotations

import streamlit as st

from labeler import app_service as svc
from labeler.errors import LabelerError
from pages._common import annotator, flash, guard, keyword_hits, pooled, show_flash, workspace

st.title("Label", anchor=False)
s, path, corp, ret = workspace()
show_flash()



def _load_demo() -> None:
    try:
        summary = svc.load_demo_golden(s, corp, path)
    except LabelerError as exc:
        flash(str(exc))
        return
    flash(f"Loaded {summary.n_questions} questions with {summary.n_judgments} judgments.", "success")
    st.session_state["q"] = s.list_questions()[0].question.query_id


if svc.demo_offer(s, path):
    with st.container(border=True, key="demo-offer"):
        st.markdown("**New here?** The sample corpus comes with a 62-question demo golden set. "
                    "Load it to explore the Golden set and Evaluate pages, or just write your own question below.")
        st.button("Load the demo golden set", key="load-demo", icon=":material/download:", on_click=_load_demo)

who = annotator()
if not who:
    st.info("Type your name under **Annotator** in the sidebar to start labelling: every grade is saved under it.")
    st.stop()

statuses = s.list_questions()
ids = [x.question.query_id for x in statuses]
by_id = {x.question.query_id: x for x in statuses}


# ---- callbacks: they run before the page, so they only write and move cursors


def _add_question() -> None:
    text = (st.session_state.get("new_question") or "").strip()
    qtype = (st.session_state.get("new_question_type") or "").strip()
    if not text:
        flash("Write the question first.", "warning")
        return
    try:
        q = s.add_question(text, query_type=qtype, author=who, corpus_fingerprint=corp.fingerprint)
    except LabelerError as exc:
        flash(str(exc))
        return
    st.session_state["q"] = q.query_id
    st.session_state["focus"] = 0
    st.session_state["new_question"] = ""
    st.session_state["new_question_type"] = None


def _move_question(step: int) -> None:
    current = st.session_state.get("q")
    i = ids.index(current) if current in ids else 0
    st.session_state["q"] = ids[max(0, min(len(ids) - 1, i + step))]
    st.session_state["focus"] = 0


def _grade(query_id: str, doc_id: str, grade: int | None, advance_focus: bool = False) -> None:
    try:
        if grade is None:
            s.clear_judgment(query_id, doc_id, annotator=who)
        else:
            s.set_judgment(query_id, doc_id, grade, annotator=who)
    except LabelerError as exc:
        flash(str(exc))
        return
    if advance_focus:
        st.session_state["focus"] = st.session_state.get("focus", 0) + 1


def _move_focus(step: int, n: int) -> None:
    st.session_state["focus"] = max(0, min(n - 1, st.session_state.get("focus", 0) + step))


def _set_unanswerable(query_id: str, value: bool) -> None:
    try:
        s.set_unanswerable(query_id, value)
    except LabelerError as exc:
        flash(str(exc))


# ---- new question

with st.form("new-question-form", border=True, enter_to_submit=True):
    c1, c2, c3 = st.columns([6, 3, 1.4], vertical_alignment="bottom")
    c1.text_input("Question", key="new_question", placeholder="Ask it the way a user would")
    c2.selectbox("Query type", svc.query_types(statuses), index=None, key="new_question_type",
                 accept_new_options=True, placeholder="choose or type a new one")
    c3.form_submit_button("Add question", type="primary", on_click=_add_question, width="stretch")

if not statuses:
    st.info("No questions yet: write the first one above. Candidates from dense and BM25 retrieval appear below it.")
    st.stop()

# ---- which question

if st.session_state.get("q") not in by_id:
    st.session_state["q"] = ids[-1]
nav1, nav2, nav3 = st.columns([7, 1.6, 1.6], vertical_alignment="bottom")
nav1.selectbox("Question to label", ids, key="q", bind="query-params",
               format_func=lambda qid: svc.question_choice_label(by_id[qid]))
nav2.button("Previous", key="prev-question", on_click=_move_question, args=(-1,), shortcut="P",
            width="stretch", icon=":material/arrow_back:")
nav3.button("Next", key="next-question", on_click=_move_question, args=(1,), shortcut="N",
            width="stretch", icon=":material/arrow_forward:")

status = by_id[st.session_state["q"]]
question = status.question
qid = question.query_id

pooled_candidates = pooled(path, question.text)
options = st.columns([2, 2, 5], vertical_alignment="center")
shuffle = options[0].toggle("Shuffle candidates", key="shuffle", help="A stable random order per question, "
                            "so the retrievers' ranking does not bias your grades.")
if question.unanswerable:
    options[1].button("Unmark unanswerable", key="unanswerable", on_click=_set_unanswerable, args=(qid, False))
else:
    options[1].button("Mark unanswerable", key="unanswerable", on_click=_set_unanswerable, args=(qid, True),
                      help="No document in the corpus answers this question.")
views = svc.candidate_views(corp, pooled_candidates, status, who, question.text, shuffle=shuffle)
progress = svc.label_progress(statuses, views)
options[2].progress(
    progress.n_complete / progress.n_questions,
    text=f"Questions done: {progress.n_complete} / {progress.n_questions} "
         f"({progress.n_unanswerable} unanswerable) · this question: {progress.judged} / {progress.candidates} "
         "candidates judged by you")

st.subheader(svc.inert(question.text), anchor=False)
type_badge = f":violet-badge[{svc.inert(question.query_type)}] " if question.query_type else ""
status_badge = {"done": ":green-badge[done]", "unanswerable": ":orange-badge[unanswerable]",
                "started": ":gray-badge[started]", "new": ":gray-badge[new]"}[status.status]
st.markdown(f"{type_badge}{status_badge} · `{qid}`", unsafe_allow_html=True)
if question.unanswerable:
    st.warning("Marked **unanswerable**: no document answers it, so grades 1-3 are off. Grade 0 still records "
               "\"seen and rejected\".")

# ---- keyboard: one set of buttons acting on the focused candidate

focus = min(st.session_state.get("focus", 0), max(len(views) - 1, 0))
st.session_state["focus"] = focus
if views:
    focused = views[focus]
    with st.container(horizontal=True, key="keyboard-bar", vertical_alignment="center", gap="small"):
        st.caption(f"Keys: **J**/**K** move the focus (now #{focus + 1}) · **0**-**3** grade it · **N**/**P** question")
        st.button("Next", key="focus-next", shortcut="J", on_click=_move_focus, args=(1, len(views)),
                  type="tertiary", help="Focus the next candidate")
        st.button("Previous", key="focus-prev", shortcut="K", on_click=_move_focus, args=(-1, len(views)),
                  type="tertiary", help="Focus the previous candidate")
        for g, short in enumerate(("Not", "Partly", "Relevant", "Fully")):
            st.button(short, key=f"key-grade-{g}", shortcut=str(g), on_click=_grade,
                      args=(qid, focused.doc_id, g, True), type="tertiary", help=f"Grade the focused candidate {g}",
                      disabled=question.unanswerable and g >= 1)


def render_candidate(view: svc.CandidateView, n: int, key: str, *, is_focused: bool) -> None:
    """One candidate card: title, badges, highlighted snippet, metadata, grade buttons, full text."""
    with st.container(border=True, key=key):
        badges = " ".join(f":{'blue' if b.startswith('dense') else 'orange' if b.startswith('BM25') else 'green'}"
                          f"-badge[{b}]" for b in view.badges)
        marker = "▶ " if is_focused else ""
        st.markdown(f"{marker}**{n}. {view.title_markup}** &nbsp; {badges}", unsafe_allow_html=True)
        st.markdown(view.snippet_markup, unsafe_allow_html=True)
        meta = " · ".join(f"{svc.inert(k)}: {svc.inert(v)}" for k, v in view.metadata.items())
        others = " · ".join(f"{svc.inert(a)}: {g}" for a, g in view.others.items())
        st.caption(f"`{view.doc_id}`" + (f" · {meta}" if meta else "") + (f" · others: {others}" if others else ""),
                   unsafe_allow_html=True)
        with st.container(horizontal=True, key=f"{key}-grades"):
            for g, name in svc.GRADES.items():
                st.button(f"{g} · {name}", key=f"{key}-g{g}", type="primary" if view.grade == g else "secondary",
                          on_click=_grade, args=(qid, view.doc_id, g),
                          disabled=question.unanswerable and g >= 1)
            if view.grade is not None:
                st.button("Clear", key=f"{key}-clear", type="tertiary", on_click=_grade, args=(qid, view.doc_id, None))
        with st.expander("Full text"):
            st.text(view.text)


# ---- candidates, then the keyword search to add one no retriever found

st.subheader(f"Candidates ({len(views)})", anchor=False)
for i, view in enumerate(views):
    render_candidate(view, i + 1, f"cand-{i}", is_focused=i == focus)

st.subheader("Find another document", anchor=False)
query = st.text_input("Search the corpus by keyword or document id", key="keyword",
                      placeholder="e.g. parental leave, or leave-004")
if query.strip():
    shown = {v.doc_id for v in views}
    hits = [h for h in keyword_hits(path, query, question.text) if h.doc_id not in shown]
    if not hits:
        st.caption("No other document matches every word.")
    for i, hit in enumerate(hits):
        render_candidate(hit, i + 1, f"hit-{i}", is_focused=False)
