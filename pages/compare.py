"""Compare runs: two saved runs side by side: per metric B - A with a 95% CI, wins/ties/losses and
a p-value, what changed in the config, and which questions got better or worse."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler_app import compare as cmp
from labeler_app import evaluate as ev
from labeler_app.text import inert
from labeler_pages._common import guard, score_columns
from labeler_pages._loaders import saved_runs, store

st.title("Compare runs", anchor=False)
s = store()
saved = saved_runs(s)
if len(saved) < 2:
    st.info("Compare needs two saved runs: run two configs on the Evaluate page.")
    st.stop()


@st.cache_data(show_spinner="Resampling…", max_entries=64)
def _compare(url: str, a_id: int, b_id: int, metrics: tuple[str, ...]) -> cmp.RunComparison:
    return cmp.compare_runs(s, a_id, b_id, metrics)  # saved runs never change: once per pair


ids = [r.run_id for r in saved]
labels = {r.run_id: ev.run_label(r) for r in saved}
p1, p2, p3, p4 = st.columns([3, 3, 1, 2])
a_id = p1.selectbox("Baseline (A)", ids, index=1, key="compare_a", format_func=labels.get)
b_id = p2.selectbox("Candidate (B)", ids, index=0, key="compare_b", format_func=labels.get)
cutoff = p3.selectbox("Cutoff", ev.CUTOFFS, index=ev.CUTOFFS.index(ev.DEFAULT_CUTOFF), key="compare_cutoff")
metrics = ev.headline_measures(cutoff)
compare_metric = p4.selectbox("Per question by", metrics, index=3, key="compare_metric")
if a_id == b_id:
    st.info("Pick two different runs.")
    st.stop()
result = guard(_compare, s.cache_key, a_id, b_id, tuple(metrics))
if result.corpus_note:
    st.warning(result.corpus_note)
if result.machine_note:
    st.info(inert(result.machine_note))
st.caption(f"{result.n_paired} questions scored in both runs are paired; B - A > 0 means B is better.")
if not result.same_golden:
    st.warning("These runs were scored against different versions of the golden set; only the questions both "
               "scored are paired.")
if result.config_diff:
    st.caption("Config changes A → B: "
               + "; ".join(inert(f"{k}: {va!r} → {vb!r}") for k, (va, vb) in result.config_diff.items()))
rows = pd.DataFrame(list(result.rows))
st.container(key="comparison").dataframe(rows, hide_index=True, key="compare_table", column_config=score_columns(rows))
better, worse = result.better(compare_metric), result.worse(compare_metric)
w1, w2 = st.columns(2)
w1.markdown(f"**Better in B** ({len(better)})")
w1.dataframe(b := pd.DataFrame(better, columns=["query_id", "change", "question"]), hide_index=True, key="better_table",
             column_config=score_columns(b))
w2.markdown(f"**Worse in B** ({len(worse)})")
w2.dataframe(w := pd.DataFrame(worse, columns=["query_id", "change", "question"]), hide_index=True, key="worse_table",
             column_config=score_columns(w))
