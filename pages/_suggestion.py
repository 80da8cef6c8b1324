"""A machine judge's grade on a Label page card, as a suggestion (labeler_app.suggestions decides when it
may show). Rendering and caching only: the card's Markdown gains one line, no element of its own."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from labeler.candidates import Candidate
from labeler_app import suggestions as sg
from labeler_app.access import Actor
from labeler_app.label import GRADES, CandidateView
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import guard

TTL_SECONDS = 30  # grades a judge adds meanwhile (labeler judge, the Judges page) show within this


@st.cache_data(show_spinner=False, max_entries=256, ttl=TTL_SECONDS)
def _found(key: str, query_id: str, _s: Store) -> sg.QuestionSuggestions:
    return sg.question_suggestions(_s, query_id)


def forget_suggestions() -> None:
    """Read the suggestions afresh (after this process saved machine grades: the Judges page)."""
    _found.clear()


def with_suggestions(s: Store, me: Actor, qid: str, views: Sequence[CandidateView]) -> list[CandidateView]:
    """The cards with the machine suggestions `me` may see now (one cached read per question)."""
    return sg.with_suggestions(views, guard(_found, s.cache_key, qid, s), me)


def with_machine_graded(s: Store, qid: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates plus the documents a judge graded here that no retriever pooled (same cached read)."""
    return sg.with_machine_graded(candidates, guard(_found, s.cache_key, qid, s))


def suggestion_markup(view: CandidateView) -> str:
    """The card's suggestion line (inert Markdown), or "" when it shows none."""
    if not view.suggestions:
        return ""
    shown = " · ".join(f"**{inert(x.judge)}** {x.grade} · {GRADES.get(x.grade, '')}" for x in view.suggestions)
    return f"\n\n:violet-badge[machine suggestion] {shown}"
