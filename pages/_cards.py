"""UI pieces of the Label page: a candidate card and the keyboard bar. Rendering only: the
actions they trigger are `labeler_app.label` functions passed in as callbacks."""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import NamedTuple

import streamlit as st

from labeler_app.label import GRADE_KEYS, GRADES, CandidateView
from labeler_app.text import inert
from labeler_pages._common import refresh_label, shown_label, widget_record
from labeler_pages._suggestion import suggestion_markup

BADGE_COLOURS = (("dense", "blue"), ("BM25", "orange"), ("shuffled", "gray"))
Grade = Callable[[str, int | None], None]  # (doc_id, grade or None to clear)


def _badges(view: CandidateView) -> str:
    def colour(badge: str) -> str:
        return next((c for prefix, c in BADGE_COLOURS if badge.startswith(prefix)), "green")

    return " ".join(f":{colour(b)}-badge[{inert(b)}]" for b in view.badges)  # a badge may name a saved system


# The key queue (pages/_keyboard.py) is an st.html element, whose code the browser loads apart, after
# the page's Markdown: on a fresh page the cards could show while a key pressed on them ran no code and
# was lost. Until the queue marks the page as listening, the candidates and the keyboard bar stay hidden.
KEYS_GATE = ('<style>body:not(.labeler-keys) [class*="st-key-cand-"], body:not(.labeler-keys) '
             '.st-key-keyboard-bar { visibility: hidden; }</style>')


def _tag(*parts: str) -> str:
    """A short stable hash of `parts` for a widget key: ids never go into a key (or a class name) as text."""
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=6).hexdigest()


def question_widget(name: str, collection: str, qid: str) -> str:
    """The key of control `name` (a button acting on the question, "unanswerable") on question `qid` of
    `collection`: a click the browser sent from another question's page (just after N, or after a switch to
    another collection, whose first question is q-0001 too) meets no control, as a grade does
    (`grade_widget`), instead of acting on the question the server has moved to."""
    return f"{name}-{_tag(collection, qid)}"


def grade_widget(collection: str, qid: str, doc_id: str) -> str:
    """The key of the grade control of document `doc_id` on question `qid` of `collection`, wherever its card is.

    A grade control is known by what it grades, not by its place (the card around it is: `cand-3`).
    The browser sends every control's value with each rerun it asks for, also one asked for before the
    last run's page had reached it (a click, or a fragment's timer). Under a key of the place
    (`cand-1-grade`) such a value from an older page met a control that now held another document (the
    ungraded cards re-ordered, the dense candidates joining, the next question) and Streamlit called its
    callback: a grade was written on a document nobody graded, or cleared one just given. Now it meets the
    control of the document it was given on, or none. The collection is part of it: question ids repeat
    across collections, and a click sent just before a switch of collection was written on the other
    collection's q-0001."""
    return pair_widget("grade", collection, qid, doc_id)


def pair_widget(name: str, collection: str, qid: str, doc_id: str) -> str:
    """The key of control `name` acting on (question, document) of `collection` (see `grade_widget`)."""
    return f"{name}-{_tag(collection, qid, doc_id)}"


def candidate_card(view: CandidateView, n: int, key: str, on_grade: Grade, *, collection: str, qid: str,
                   focused: bool, unanswerable: bool, read_only: bool = False) -> None:
    """One candidate: title, badges, highlighted snippet, metadata, grade buttons, full text."""
    with st.container(border=True, key=key):
        # One markdown element for title, snippet, ids and the full text (an HTML <details>): a grade
        # click re-renders every card of the question, and each element is one more message to the
        # browser (about 210 per click with four elements here instead of one).
        meta = " · ".join(f"{inert(k)}: {inert(v)}" for k, v in view.metadata.items())
        others = " · ".join(f"{inert(a)}: {g}" for a, g in view.others.items())
        full = "<br>".join(inert(line) for line in view.text.splitlines())
        # The gate's <style> is an HTML block: on the title's line it would swallow the Markdown after it.
        st.markdown(f"{KEYS_GATE + chr(10) * 2 if n == 1 and key.startswith('cand-') else ''}"
                    f"{'▶ ' if focused else ''}**{n}. {view.title_markup}** &nbsp; {_badges(view)}\n\n"
                    f"{view.snippet_markup}\n\n"
                    f"<small><code>{inert(view.doc_id)}</code>{f' · {meta}' if meta else ''}"
                    f"{f' · others: {others}' if others else ''}</small>{suggestion_markup(view)}"
                    + (f"\n\n<details><summary>Full text</summary>{full}</details>" if full else ""),
                    unsafe_allow_html=True)
        grade_control(view, grade_widget(collection, qid, view.doc_id), on_grade, unanswerable=unanswerable,
                      read_only=read_only)


def grade_control(view: CandidateView, widget: str, on_grade: Grade, *, unanswerable: bool, read_only: bool) -> None:
    """The card's grade as one segmented control (one element, not a row of buttons: a click re-renders
    every card, and each element is a message to the browser). Clicking the selected grade clears it.
    While you mark the question unanswerable, only 0 is offered."""
    echoes = st.session_state.setdefault(ECHOES, {})
    before, now = st.session_state.setdefault(DRAWN, (frozenset(), set()))
    back = widget not in before and widget in st.session_state  # see DRAWN
    now.add(widget)
    if st.session_state.get(widget) == view.grade and not back:
        echoes.pop(widget, None)  # the browser shows the saved grade
    else:
        if widget in st.session_state and st.session_state[widget] != view.grade:
            echoes[widget] = st.session_state[widget]  # what the browser shows until it hears of the next line
        st.session_state[widget] = view.grade  # what is saved, also after a key or an undo changed it; sent anew
    options = sorted({0, view.grade} - {None}) if unanswerable else list(GRADES)
    st.segmented_control("Grade", options, key=widget, format_func=lambda g: f"{g} · {GRADES[g]}",
                         label_visibility="collapsed", disabled=read_only, on_change=_changed,
                         args=(widget, view.doc_id, on_grade))


# A grade control Streamlit knows (its callback saved a click) but which the last run did not draw: a run cut
# short by a newer request (N, then at once a grade click on the page N was leaving: the N run began to draw
# the next question and stopped) made the browser drop its value. Drawn again with the saved grade, which
# Streamlit does not send when it is the value the server holds, the card showed no grade over a saved
# one, and the browser's empty value on the next rerun (a J) cleared the grade in the database. Such a
# control gets its saved grade sent anew. `begin_grade_run` starts each run's list.
DRAWN = "_grade_controls_drawn"  # (the keys the last run drew, even one cut short; those this run draws)


def begin_grade_run() -> None:
    """At the start of each run that may draw grade controls: the whole page's, or the judging area's alone."""
    _, last = st.session_state.get(DRAWN, (frozenset(), set()))
    st.session_state[DRAWN] = (frozenset(last), set())


# A control's value the browser sends back before it heard that the server set another (an undo, or a
# grade saved elsewhere) is an echo, not a click: the browser sends every control's value with each
# rerun, and a click on card 2 just after U carried card 1's grade from before the undo, which
# Streamlit took for a change and saved again (the undo undone). A change back to what the control
# showed before the server's set is held until the judging area runs (`settle_echoes`): saved if it
# was the rerun's only grade change (a click: grade 2 given again after the undo showed), dropped if
# another control changed in the same rerun (the click that carried the echo).
ECHOES = "_grade_echoes"  # widget -> the grade its control showed before the server set another
HELD = "_grade_echoes_held"  # this rerun's changes that may be no click: (on_grade, doc_id, grade, with a button)
CLICKED = "_grade_clicked"  # this rerun changed a grade control to a value it never showed: a click


# An empty value is held too, and saved (a clear) only when it is the message's one change: the browser sends one
# user action per message. A card it showed empty over a saved grade (its value dropped by a run cut short, see
# DRAWN) sent that emptiness with the next action: a J wiped two grades in a Chromium probe, and a click on
# another card would have. Such a grade is kept and drawn again. (A clear clicked while the server was busy and
# merged into one rerun with another click keeps its grade too: the card shows it; a second click clears it.)
def _button_pressed_now() -> bool:
    """The browser's message for this rerun presses a button (J, N, Undo …); read while the callbacks run."""
    fresh = getattr(widget_record(), "_current_interaction_widget_states", None)
    return any(w.WhichOneof("value") == "trigger_value" and w.trigger_value for w in getattr(fresh, "widgets", ()))


def _changed(widget: str, doc_id: str, on_grade: Grade) -> None:
    value = st.session_state[widget]
    if value is None or (widget in st.session_state.get(ECHOES, {}) and st.session_state[ECHOES][widget] == value):
        st.session_state.setdefault(HELD, []).append((on_grade, doc_id, value, value is None and _button_pressed_now()))
        return
    st.session_state[CLICKED] = True
    on_grade(doc_id, value)


def settle_echoes() -> None:
    """First thing in the judging area's run, after the callbacks: save the held changes that were no echo, and
    a clear only when it was the message's one change."""
    held, clicked = st.session_state.pop(HELD, []), st.session_state.pop(CLICKED, False)
    for on_grade, doc_id, value, with_button in [] if clicked else held:
        if value is None and (with_button or len(held) > 1):
            continue
        on_grade(doc_id, value)


def keyboard_bar(focus: int, n: int, focused_doc: str, on_grade: Grade, on_move: Callable[[int], None], *,
                 unanswerable: bool, read_only: bool = False, on_undo: tuple | None = None) -> None:
    """J/K move the focus, 0-3 grade the focused candidate and jump to the next ungraded one, U undoes."""
    with st.container(horizontal=True, key="keyboard-bar", vertical_alignment="center", gap="small"):
        st.caption(f"Focus: now #{focus + 1} of {n} · **X** unanswerable · **Esc** leaves a text box",
                   help="Keys: **J**/**K** move the focus · **0**-**3** grade the focused card, then the focus jumps "
                        "to the next card you have not graded · **X** mark unanswerable · **U** undo · **N**/**P** "
                        "next/previous question · **Esc** leaves a text box. Keys pressed while the page is busy or "
                        "still loading are queued. Click a selected grade again to clear it.")
        st.button("Undo", key="undo-grade", shortcut="U", on_click=on_undo[0] if on_undo else None,
                  args=on_undo[1:] if on_undo else None, type="tertiary", disabled=on_undo is None or read_only,
                  help="Put back the grade your last click replaced")
        st.button("Next", key="focus-next", shortcut="J", on_click=on_move, args=(1,), type="tertiary",
                  help="Focus the next candidate")
        st.button("Previous", key="focus-prev", shortcut="K", on_click=on_move, args=(-1,), type="tertiary",
                  help="Focus the previous candidate")
        for g, short in enumerate(GRADE_KEYS):
            st.button(short, key=f"key-grade-{g}", shortcut=str(g), on_click=on_grade, args=(focused_doc, g, True),
                      type="tertiary", help=f"Grade the focused candidate {g}",
                      disabled=read_only or (unanswerable and g >= 1))


# The form's keys carry the number of questions it has added in this session. A click sent from the page
# before an add's answer came carries the form as it was then (the text typed, the popover open), which
# Streamlit took: the form came back open with the added question in it. Under a new number that old state
# belongs to controls no longer drawn, and is dropped; the new form starts folded and empty.
ADDED_HERE = "_questions_added_here"


class NewQuestionKeys(NamedTuple):
    box: str  # the popover: its state says whether it is open
    form: str
    text: str
    query_type: str

    @property
    def submit(self) -> str:
        """The form's button, as AppTest names it."""
        return f"FormSubmitter:{self.form}-Add question"


def new_question_keys(state=None) -> NewQuestionKeys:
    """The keys of the form drawn now (`state`: a session state, Streamlit's own by default)."""
    state = st.session_state if state is None else state
    n = state[ADDED_HERE] if ADDED_HERE in state else 0
    return NewQuestionKeys(f"new-question-box-{n}", f"new-question-form-{n}", f"new_question-{n}",
                           f"new_question_type-{n}")


def new_question_form(query_types: list[str], on_add: Callable[[], None], *, within=None) -> None:
    """Write a question and pick (or type) its query type: in a "New question" popover in the column
    `within` (it closes again once the question is added), or on the page itself (no `within`). `on_add`
    reads the values under `new_question_keys()` and calls `question_added()` once it has added one."""
    keys = new_question_keys()
    box = within.popover("New question", key=keys.box, on_change="rerun", icon=":material/add:",
                         width="stretch") if within is not None else st.container()
    with box, st.form(keys.form, border=within is None, enter_to_submit=True):
        c1, c2, c3 = st.columns([6, 3, 1.4], vertical_alignment="bottom") if within is None else (st, st, st)
        c1.text_input("Question", key=keys.text, placeholder="Ask it the way a user would")
        c2.selectbox("Query type", query_types, index=None, key=keys.query_type,
                     accept_new_options=True, placeholder="choose or type a new one")
        c3.form_submit_button("Add question", type="primary", on_click=on_add, width="stretch")


def question_added() -> None:
    """The next run draws a new, folded and empty form."""
    st.session_state[ADDED_HERE] = st.session_state.get(ADDED_HERE, 0) + 1


def demo_offer_box(on_load: Callable[[], None]) -> None:
    """The offer of the sample corpus's demo golden set, on a database without questions."""
    with st.container(border=True, key="demo-offer"):
        st.markdown("**New here?** The sample corpus comes with a 62-question demo golden set. "
                    "Load it to explore the Golden set and Evaluate pages, or just write your own question below.")
        st.button("Load the demo golden set", key="load-demo", icon=":material/download:", on_click=on_load)


def start_question(key: str, ids: list[str], unfinished: Callable[[], str | None]) -> None:
    """The question to show when none is picked (or it is gone): `?q=<query_id>` from the URL, else
    the annotator's first unfinished one (`unfinished()`, asked only then), else the last."""
    if st.session_state.get(key) not in ids:
        wanted = st.query_params.get("q")
        st.session_state[key] = wanted if wanted in ids else unfinished() or ids[-1]
        if wanted and wanted not in ids:  # never a silent swap: the link named another question
            st.warning(f"There is no question {inert(wanted[:40])} here (it was deleted, or the link is for "
                       f"another collection); showing {inert(st.session_state[key])}.")


def question_picker(key: str, labels: dict[str, str], on_move: Callable[[int], None],
                    extra: Callable[[object], None] | None = None) -> None:
    """The question selectbox with Previous/Next buttons (keys P and N), and `extra(column)` drawing one
    more button at the end of the row; the URL carries `?q=<query_id>` (only the id: a link survives
    edits and status changes, which change the label)."""
    nav1, nav2, nav3, *nav4 = st.columns([6, 1.8, 1.5] + ([2.1] if extra else []), vertical_alignment="bottom")
    refresh_label(key, lambda qid: labels.get(qid, ""))
    picked = nav1.selectbox("Question to label", list(labels), key=key, format_func=labels.get)
    shown_label(key, picked, labels.get(picked, ""))
    st.query_params["q"] = st.session_state[key]
    nav2.button("Previous", key="prev-question", on_click=on_move, args=(-1,), shortcut="P", width="stretch",
                icon=":material/arrow_back:")
    nav3.button("Next", key="next-question", on_click=on_move, args=(1,), shortcut="N", width="stretch",
                icon=":material/arrow_forward:")
    if extra:
        extra(nav4[0])
