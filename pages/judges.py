"""Judges: declare a machine judge as data and test it on one pair, see how far it agrees with the team's
people (calibration, confusion matrix), whether it passes the team's bars, grade a run's holes with it,
and a run's numbers with and without its grades. Wiring only: labeler_app.judges does the work."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from labeler_app import evaluate as ev
from labeler_app import judges as J
from labeler_app.access import Can
from labeler_app.text import inert
from labeler_pages._common import actor, guard
from labeler_pages._judges import (
    bars_section, calibration_section, declare_section, evaluation_section, post_edit_section,
)
from labeler_pages._loaders import saved_runs, workspace
from labeler_pages._suggestion import forget_suggestions

RUN_PARAM = "run"  # ?run=<id>: the run whose holes to grade (the Evaluate page's link)

st.title("Judges", anchor=False)
st.caption("A machine judge grades (question, document) pairs. Its grades are kept apart from people's, never "
           "enter the golden set's relevance, and fill holes in a metric only when it passes the team's bars.")
s, path, corp, _ = workspace(with_retriever=False)
me = actor()
bars_section(s, me)
name = declare_section(s, me, corp)
post_edit_section(s)  # what annotators did with every judge's suggestions, saved judge or not

if name is None:
    st.stop()

def _grade(run: int | None, limit: int) -> None:
    bar = st.progress(0.0, text="Judging…")
    done = guard(J.judge_holes, s, me, name, run, corp, limit=limit,
                 progress=lambda d, t, stage: bar.progress(d / t if t else 1.0, text=f"{stage}: {d} / {t} pairs"))
    bar.empty()
    forget_suggestions()  # the Label page shows the new grades at once, not after its cache expires
    (st.warning if done.failures else st.success)(inert(done.line))
    if done.failures:
        st.dataframe(pd.DataFrame([{"query_id": f.query_id, "doc_id": f.doc_id, "error": f.error}
                                   for f in done.failures]), hide_index=True, key="judge_failures")


saved = saved_runs(s)
run_id = None
grading = me.can(Can.RUN_EVALUATION)
if st.button("Grade the pairs people graded", key="judge-judged", disabled=not grading,
             help="What the calibration rests on: the judge grades the pairs the team graded."):
    _grade(None, 100_000)
if saved:
    ids = [r.run_id for r in saved]
    asked = st.query_params.get(RUN_PARAM, "")
    r1, r2, r3 = st.columns([3, 1, 1], vertical_alignment="bottom")
    run_id = r1.selectbox("Run", ids, index=ids.index(int(asked)) if asked.isdigit() and int(asked) in ids else 0,
                          key="judge_run", format_func={r.run_id: ev.run_label(r) for r in saved}.get)
    limit = r2.number_input("At most", 1, 100_000, 100, key="judge_limit", help="Pairs to grade in this go.")
    if r3.button("Judge the holes", key="judge-holes", type="primary", disabled=not grading):
        _grade(run_id, int(limit))
else:
    st.info("Save a run on the Evaluate page to grade its holes with this judge.")

counts = guard(J.machine_grade_counts, s)
if counts:
    st.markdown("**Machine grades in this collection**")
    st.dataframe(pd.DataFrame([{"judge": c.judge, "grades": c.grades, "current": c.current, "stale": c.stale,
                                "questions": c.questions} for c in counts]), hide_index=True, key="grade_counts")


# Machine grades, the bars and the judge's declaration do not bump the collection's revision: all are in the key.
@st.cache_resource(show_spinner="Calibrating…", max_entries=16)
def _calibration(url: str, judge: str, spec: str, revision: int, n_grades: int, bars: str):
    return J.collection_calibration(s, J.saved_judge(s, judge))


@st.cache_resource(show_spinner="Scoring…", max_entries=16)
def _judged(url: str, judge: str, spec: str, revision: int, n_grades: int, bars: str, run: int):
    return J.evaluate_with_judge(s, me, run, judge)


bars = guard(J.judge_bars, s)
key = (s.cache_key, name, json.dumps(guard(J.saved_judge, s, name).to_dict(), sort_keys=True), guard(s.collections.revision),
       sum(c.grades for c in counts if c.judge == name), json.dumps(bars, sort_keys=True))
st.subheader(f"Calibration of {inert(name)}", anchor=False)
cal = guard(_calibration, *key)
calibration_section(cal, J.gate(cal, bars))
if run_id is not None:
    st.subheader(f"Run #{run_id} with and without {inert(name)}'s grades", anchor=False)
    evaluation_section(s, me, guard(_judged, *key, run_id))
