"""The Evaluate page's other systems: an HTTP endpoint declared as data (test-query it, save it,
score it) or an uploaded TREC run file. Wiring only: labeler_app.systems checks and runs everything."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.corpus import Corpus
from labeler_app import systems as sy
from labeler_app import stores as db
from labeler_app.access import Actor, Can
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import Keys, act, flash, guard, pick_declared, score_columns, show_flash
from labeler_pages._eval_results import scroll_after_run

NEW = "(new declaration)"
SLOT = "systems_flash"


def _progress():
    bar = st.progress(0.0, text="Asking the system…")
    return bar, lambda done, total, stage: bar.progress(done / total if total else 1.0,
                                                         text=f"{stage}: {done} / {total} questions")


def _finish(view) -> None:
    st.session_state[Keys.JUST_RUN] = view  # the page shows this report as computed, this rerun
    st.session_state[Keys.EVAL_RUN] = view.record.run_id
    scroll_after_run()
    st.success(f"Run #{view.record.run_id} saved ({inert(sy.system_line(view.record.config))}).")


def _save(s: Store, me: Actor, text_key: str) -> None:
    name = act(sy.save_system, s, me, st.session_state.get(text_key) or "", slot=SLOT)
    if name:
        st.session_state["system_pick"] = name  # the saved one is picked on the next run
        flash(f"Saved system {inert(repr(name))}.", "success", slot=SLOT)


def _delete(s: Store, me: Actor, name: str) -> None:
    if act(sy.delete_system, s, me, name, slot=SLOT):
        st.session_state.pop("system_pick", None)
        flash(f"Deleted system {inert(repr(name))}.", "success", slot=SLOT)


def endpoint_section(s: Store, me: Actor, corp: Corpus, path: str, stale: str) -> None:
    """Pick or declare an endpoint; test-query it; save it; score it."""
    show_flash(SLOT)
    saved = guard(sy.saved_systems, s)
    declare = me.can(Can.DECLARE_SYSTEMS)
    pick = pick_declared("System", saved, NEW, declare=declare, key="system_pick", kind="endpoint")
    if pick is None:
        return
    text = st.text_area("Declaration (TOML)", value=sy.shown_text(saved[pick]) if pick in saved else sy.EXAMPLE,
                        height=300, key=f"system_text_{pick}", disabled=not declare,
                        help="URL and body templates take {query} and {k}; header values may read the "
                             f"environment variables listed in {sy.SYSTEM_ENV} as ${{NAME}}.")
    q1, q2 = st.columns([4, 1], vertical_alignment="bottom")
    question = q1.text_input("Test question", key="system_question", placeholder="How many vacation days do I get?")
    if declare and q2.button("Test query", key="system-test"):
        probe = guard(sy.probe_view, guard(sy.test_query, me, text, question), corp)
        (st.error if probe.error else st.caption)(inert(probe.error or probe.status))
        if probe.hits:
            st.dataframe(frame := pd.DataFrame(probe.hits), hide_index=True, key="probe_hits",
                         column_config=score_columns(frame))
        with st.expander("Raw response"):
            st.code(probe.raw or "(empty)", language="json")
    b1, b2, b3, b4 = st.columns([1, 1, 1, 3], vertical_alignment="bottom")
    if declare:
        b1.button("Save", key="system-save", on_click=_save, args=(s, me, f"system_text_{pick}"))
    if declare and pick in saved:
        b2.button("Delete", key="system-delete", on_click=_delete, args=(s, me, pick))
    k = b4.number_input("Documents per question (k)", 1, 1000, 100, key="system_k")
    if b3.button("Run evaluation", key="system-run", type="primary", disabled=pick not in saved,
                 help=None if pick in saved else "Save the declaration first."):
        bar, progress = _progress()
        view = guard(sy.run_system, s, me, guard(sy.system_for, s, me, pick), corp, k=int(k), stale=stale,
                     corpus_path=path, progress=progress)
        bar.empty()
        _finish(view)


def upload_section(s: Store, me: Actor, corp: Corpus, path: str, stale: str) -> None:
    """Score a TREC run file (qid Q0 docid rank score tag), as `labeler score` does."""
    up = st.file_uploader("TREC run file", key="run_upload", help="query_id Q0 doc_id rank score tag; ranked by score.")
    if up is not None and st.button("Score it", key="run-upload-score", type="primary"):
        system = guard(sy.uploaded_run, up.name, up.getvalue(), guard(db.golden_set, s))
        bar, progress = _progress()
        view = guard(sy.run_system, s, me, system, corp, k=1000, name=up.name, stale=stale, corpus_path=path,
                     progress=progress)
        bar.empty()
        _finish(view)
