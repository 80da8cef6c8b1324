"""The Label page's judging order (labeler_app.judging_order), as widgets: the order picker, the cards' layout
kept between reruns, "Find more", the stopping note and where judging is likely to find more. Session state holds UI cursors only: the
order picked, the last layout per question and the documents "Find more" brought in (a grade given
to one is saved at once like any other)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from labeler.judging import QuestionFeatures
from labeler_app import judging_order as jo
from labeler_app.label import CandidateView
from labeler_app import spread as sp
from labeler_app.spread import FLOOR
from labeler_app.text import inert
from labeler_pages._common import Keys, act, flash
from labeler_pages._keyboard import SCROLL_PENDING
from labeler_pages._loaders import my_judging

ORDER = "judging_order"
LAYOUTS = "_order_layouts"  # query_id -> labeler_app.judging_order.Layout last shown
FOUND = "_order_found"  # query_id -> {doc_id: badges} brought in by "Find more"
KEPT = 64  # layouts kept per session (the most recent questions)


def order_control(column) -> str:
    """The order picker; the choice stays for the session, and in the URL (`?order=`) unless it is the default."""
    if ORDER not in st.session_state:  # a reload (or a link) keeps it; the older `?shuffle=1` too
        wanted = st.query_params.get("order") or ("shuffle" if st.query_params.get("shuffle") == "1" else None)
        st.session_state[ORDER] = wanted if wanted in jo.ORDERS else jo.DEFAULT_ORDER
    mode = column.selectbox("Order", list(jo.ORDERS), key=ORDER, format_func=jo.ORDERS.get, label_visibility="collapsed",
                            help="**Most likely relevant first**: a model learns from your grades on this question and "
                                 "orders the cards you have not graded after the one you just graded (cards above it stay "
                                 "put). **Retriever order**: as dense and BM25 ranked them. **Shuffle**: a stable random "
                                 "order, retriever badges hidden until you grade a card.")
    st.query_params.pop("shuffle", None)
    if mode == jo.DEFAULT_ORDER:
        st.query_params.pop("order", None)
    else:
        st.query_params["order"] = mode
    return mode


def found(qid: str) -> dict[str, tuple[str, ...]]:
    """The documents "Find more" brought in on this question in this session, with their badges."""
    return st.session_state.get(FOUND, {}).get(qid, {})


def arranged(qid: str, views: Sequence[CandidateView], mine: Mapping[str, int], features: QuestionFeatures,
             *, first: Sequence[str], show_model: bool) -> list[CandidateView]:
    """The views most likely relevant first, laid out from the last layout of this question (labeler_app.judging_order.arrange)."""
    layouts: dict = st.session_state.setdefault(LAYOUTS, {})
    layout = jo.arrange(layouts.get(qid), [v.doc_id for v in views], mine, jo.model_order(features, qid, mine),
                        focus=st.session_state.get(Keys.FOCUS, 0), first=first)
    layouts.pop(qid, None)
    layouts[qid] = layout  # most recent last
    while len(layouts) > KEPT:
        layouts.pop(next(iter(layouts)))
    return jo.ordered_views(views, layout, show_model=show_model)


def _find_more(qid: str, features: QuestionFeatures, mine: Mapping[str, int], shown: Sequence[str]) -> None:
    more = act(jo.find_more, features, qid, mine, shown)
    if not more:
        if more is not False:
            flash("Nothing more to find: every document of the corpus is among the cards.", "info")
        return
    st.session_state.setdefault(FOUND, {}).setdefault(qid, {}).update(more)
    flash(f"Added {len(more)} document{'s' if len(more) != 1 else ''} found beyond the pool (marked "
          f"*{jo.FOUND_BADGE}*): the model's most likely relevant ones, and each retriever's next past its top 10.",
          "success")


def find_more_button(qid: str, features: QuestionFeatures, mine: Mapping[str, int], shown: Sequence[str]) -> None:
    """ "Find more": the next most likely relevant documents of the whole corpus join the cards."""
    st.button("Find more", key="find-more", icon=":material/travel_explore:", on_click=_find_more,
              args=(qid, features, dict(mine), list(shown)),
              help="Bring in the documents of the whole corpus the model now finds most likely relevant, and the next "
                   "ones dense and BM25 rank past their top 10; none of them is among the cards yet.")


def stopping_note(stop: jo.Stopping) -> None:
    """Where the stopping estimate stands: a caption before the knee, a box once it asks for the sample or has an estimate."""
    if stop.knee_at is None:
        st.caption(stop.note)
    elif stop.likely_complete:
        st.success(stop.note)
    else:
        st.info(stop.note)


def _go_to(query_id: str) -> None:
    st.session_state.update({Keys.QUESTION: query_id, Keys.FOCUS: 0, SCROLL_PENDING: True})  # its first card in view


def spread_note(s, me, qid: str, index: Sequence, status) -> None:
    """Under the cards, once this annotator has given FLOOR grades here: the question where their next
    grades are likely to find more (labeler_app.spread), with a button to go there."""
    here = sp.here_counts(status, me.name)
    if here[0] < FLOOR:  # nothing to read before the floor
        return
    there = sp.better_elsewhere(me, qid, [x.query_id for x in index], my_judging(s, me, qid), here)
    if there is None:
        return
    text = next((x.question for x in index if x.query_id == there.query_id), there.query_id)
    with st.container(key="spread-note"):
        st.info(f"{there.note}\n\nNext: *{inert(text)}*")
        st.button("Go to that question", key="spread-go", on_click=_go_to, args=(there.query_id,),
                  icon=":material/arrow_forward:")
