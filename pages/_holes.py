"""The Label page's bar while judging a saved run's holes (labeler_app.holes): how many are left, the next
question with holes, and a way out."""
from __future__ import annotations

import streamlit as st

from labeler_app.holes import Holes
from labeler_pages._common import HOLES_PARAM, Keys


def holes_bar(holes: Holes, qid: str) -> None:
    """Judging a run's holes: how many are left, where the next ones are, and a way out."""
    here = len(holes.by_question.get(qid, ()))
    left, go, stop = st.columns([6, 2, 1], vertical_alignment="center")
    left.info(f"Judging the holes: {holes.text}; {here} on this question, shown first (badge `{holes.badge} #rank`).")
    nxt = next((q for q in holes.by_question if q != qid), None)
    go.button("Next question with holes", key="holes-next", disabled=nxt is None,
              on_click=lambda: st.session_state.update({Keys.QUESTION: nxt, Keys.FOCUS: 0}))
    stop.button("Stop", key="holes-stop", on_click=_stop)


def _stop() -> None:
    st.session_state.pop(Keys.HOLES, None)
    st.query_params.pop(HOLES_PARAM, None)
