"""After a server restart (a deploy, a crash, a replica failover) a click is saved or visibly refused,
never shown as saved when it was not.

An open tab reconnects to the new process on its own, but that process holds none of the page's
session: no fragment, no widget callback, no session state. Three things close the gaps:

1. `rerun_on_reconnect` keeps a fragment with `run_every` on every page. Streamlit's frontend asks for
   a whole-page run when it reconnects only if the last run was a fragment's or the page has an
   auto-rerun fragment; otherwise a tab idle since it loaded kept showing a page the new process
   never drew, and its grade clicks (fragment reruns) went nowhere.
2. `labeler_edge._serve.keep_clicks_in_unknown_fragments` patches Streamlit at start-up: a click in a fragment the session
   does not hold (the page was drawn by an earlier process, or a click came before the reconnect's
   run reached the fragment) reruns the whole page with the click's widget values, where Streamlit
   drops it ("The fragment with id ... does not exist anymore") and the control stays selected.
3. `refuse_unsaved` runs after the grade controls are drawn: in a session's first runs no callback
   can fire (the widgets are not registered yet), so a control may show a grade the page sent but the
   server never wrote (a click in the restart's window, or one the old process died with). Each is
   named as not saved and the page reruns, so every control shows what the database holds. A grade the
   browser sent for a control this run does not draw (a document the new process does not pool, such as
   one "Find more" brought in; a card of the question just left) is named too: Streamlit keeps such a
   value without a word and forgets it when the run ends.
The notes stay above the cards until the document is graded again or they are dismissed: a note that
went with the next run (a key, a timer) could pass unseen.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

import streamlit as st
from streamlit.logger import get_logger

from labeler_app.label import GRADES, CandidateView
from labeler_app.text import inert
from labeler_pages._cards import grade_widget
from labeler_pages._common import widget_record

_LOG = get_logger(__name__)  # in the server's log, with Streamlit's own lines
RECONNECT_RERUN_S = 6 * 3600  # the fragment's own reruns: four a day of an empty fragment
REFUSED = "_refused_unsaved"  # the (control, grade) pairs the last refusal named: each is named once
NOTES = "_unsaved_notes"  # control key -> (question, note, saved grade then): shown until graded again or dismissed
TOASTS = "_unsaved_toasts"  # the same notes as toasts: seen wherever the page is scrolled to
SHOWN = "_questions_shown"  # the last questions whose cards this session drew: a late click may be theirs
MAX_NOTES = 20
# A grade control's element id ends with its key (Streamlit: "$$ID-<hash>-<key>"; pages/_cards.py grade_widget).
_GRADE_ID = re.compile(r"-(grade-[0-9a-f]{12})$")


@st.fragment(run_every=RECONNECT_RERUN_S)
def rerun_on_reconnect() -> None:
    """Draws nothing: its `run_every` makes the frontend run the whole page again after a reconnect."""


def unsaved_note(card: str, qid: str, doc_id: str, shown: int | None, saved: int | None) -> str:
    """What the page says about a grade click on `card` ("card 3") of question `qid` the server never wrote
    (the question named: the note stays while the annotator moves on)."""
    click = f"clearing grade {saved}" if shown is None else f"{shown} · {GRADES[shown]}"
    return (f"Not saved: {click} on {inert(doc_id)} ({card} of question {inert(qid)}, where the page shows it now). "
            f"The server never wrote that click (it restarted, or the click came from a page it had already "
            f"replaced); {_now(saved)}. Grade it again.")


def show_unsaved(qid: str) -> None:
    """Above the cards: the notes of grades not saved, until each document is graded again or they are dismissed."""
    for note in st.session_state.pop(TOASTS, []):
        st.toast(note, icon=":material/error:", duration="long")
    notes = st.session_state.get(NOTES, {})
    for _, note, _ in notes.values():
        st.warning(note)
    if notes:
        st.button("Dismiss these notes", key="dismiss-unsaved", type="tertiary", on_click=notes.clear)
    st.session_state.setdefault(SHOWN, [])
    shown = [q for q in st.session_state[SHOWN] if q != qid]
    st.session_state[SHOWN] = [*shown[-2:], qid]


def sent_undrawn() -> dict[str, int]:
    """The grades the browser sent with this run for grade controls this session does not hold (no control
    drawn under that key in this run or the last): {key: grade}. Cleared controls are left out: a card the
    browser shows ungraded is no click to name."""
    widgets = getattr(widget_record(), "_new_widget_state", None)
    sent: dict[str, int] = {}
    for wid, state in list(getattr(widgets, "states", {}).items()):
        if (m := _GRADE_ID.search(wid)) is None or wid in widgets.widget_metadata:
            continue
        proto = getattr(state, "value", None)
        if getattr(proto, "WhichOneof", lambda _: None)("value") == "string_array_value" and proto.string_array_value.data:
            grade = proto.string_array_value.data[0].split(" · ")[0]
            if grade.isdigit() and int(grade) in GRADES:
                sent[m.group(1)] = int(grade)
    return sent


def _undrawn_notes(sent: Mapping[str, int], collection: str, doc_ids: Callable[[], Iterable[str]],
                   saved: Callable[[], Mapping[tuple[str, str], int]]) -> dict[str, tuple[str, str, int | None]]:
    """Name each grade of `sent` that is not the saved one (`saved()`: this annotator's grades by (question,
    document)): by its document where it is a judged pair or a document of one of the questions this session
    showed last (each of `doc_ids()` tried under that question), else as a click on a page no longer shown."""
    mine = saved()
    pairs = {grade_widget(collection, q, d): (q, d) for q, d in mine}
    for qid in reversed(st.session_state.get(SHOWN, [])):
        if any(k not in pairs for k in sent):
            pairs |= {k: (qid, d) for d in doc_ids() if (k := grade_widget(collection, qid, d)) in sent and k not in pairs}
    notes = {}
    for key, grade in sent.items():
        if key not in pairs:
            notes[key] = ("", f"Not saved: a grade {grade} · {GRADES[grade]} clicked on a page no longer shown "
                              f"(another question, or a page from before a restart) reached the server after its "
                              f"card was gone. Find that card and grade it again.", None)
        elif (now := mine.get(pairs[key])) != grade:
            qid, doc = pairs[key]
            notes[key] = (qid, f"Not saved: {grade} · {GRADES[grade]} on {inert(doc)} of question {inert(qid)}. Its "
                               f"card was no longer on the page when the click reached the server (a restart, or the "
                               f"page had moved on); {_now(now)}. Grade it again.", now)
    return notes


def _now(saved: int | None) -> str:
    """What the annotator's saved grade is, for a note."""
    return "it has no grade from you" if saved is None else f"your saved grade is {saved} · {GRADES[saved]}"


def refuse_unsaved(cards: Iterable[tuple[str, str, CandidateView]], *, qid: str, collection: str,
                   doc_ids: Callable[[], Iterable[str]], saved: Callable[[], Mapping[tuple[str, str], int]]) -> None:
    """After the grade controls are drawn: name each `(card, widget, view)` whose control shows a grade
    that is not the saved one, then rerun the page so the control shows the saved grade (the card's
    control takes its value from the database before it is drawn, once Streamlit knows the control).
    Name too each grade the browser sent for a control not drawn (`sent_undrawn`): `doc_ids()` the corpus's
    documents, `saved()` this annotator's grades in the collection (both read only when such a grade came)."""
    cards = list(cards)
    notes: dict = st.session_state.setdefault(NOTES, {})
    for _, widget, view in cards:  # graded again since its note: the note has done its work
        if widget in notes and view.grade != notes[widget][2]:
            del notes[widget]
    refused = st.session_state.pop(REFUSED, set())
    stray = {widget: (qid, unsaved_note(card, qid, view.doc_id, shown, view.grade), view.grade)
             for card, widget, view in cards
             if (shown := st.session_state.get(widget)) != view.grade and (widget, shown) not in refused}
    if sent := {k: g for k, g in sent_undrawn().items() if (k, g) not in refused and k not in stray}:
        stray |= _undrawn_notes(sent, collection, doc_ids, saved)
    if not stray:
        return
    for key, (_, note, _) in stray.items():
        _LOG.info("A grade click was named as not saved (%s): %r", key, note)  # %r: an id cannot forge a log line
    notes.update(stray)
    for key in list(notes)[:-MAX_NOTES]:
        del notes[key]
    st.session_state.update({REFUSED: {(w, st.session_state.get(w, sent.get(w))) for w in stray},
                             TOASTS: [note for _, note, _ in stray.values()]})
    st.rerun(scope="app")
