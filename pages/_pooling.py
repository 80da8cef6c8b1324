"""The Label page's "Also pool candidates from" system, asked in the background: its candidates join
the pool when it answers, and a slow one never holds up judging (labeler_app.pooling.system_ranks)."""
from __future__ import annotations

import streamlit as st

from labeler.errors import LabelerError
from labeler_app.background import Pending
from labeler_app.pooling import system_ranks as ask
from labeler_app.text import inert
from labeler_pages._loaders import store

FIRST_WAIT = 1.0  # seconds the first ask for a question may wait; later reruns (grade clicks) never wait
WAITED = "pool_waited"


@st.fragment(run_every=1)
def _watch(name: str, me, question: str, k: int) -> None:
    """The "slow" note, until the system answers: then the page reruns with its candidates."""
    try:
        answered = not isinstance(ask(store(), me, name, question, k), Pending)
    except LabelerError:  # failed: the rerun says so
        answered = True
    if answered:
        st.rerun(scope="app")
    st.info(f"{inert(name)} is slow: its candidates join when ready.")


def system_ranks(name: str, question: str, me, k: int = 10) -> dict[str, int]:
    """A saved system's top k for a question as {doc_id: rank}, asked on `me`'s behalf; {} with a
    note while it is slow and with a warning when it failed: the other candidates are there to judge."""
    try:
        waited = st.session_state.setdefault(WAITED, set())
        ranks = ask(store(), me, name, question, k, wait=0.0 if (name, question) in waited else FIRST_WAIT)
        waited.add((name, question))
    except LabelerError as exc:  # a failed search (kept a minute, not asked again on every click)
        st.warning(f"{inert(name)} did not answer: {inert(str(exc))}")
        return {}
    if isinstance(ranks, Pending):
        _watch(name, me, question, k)
        return {}
    return ranks
