"""Evaluate: run a retrieval config against the golden set, see metrics with 95% CIs, per type,
abstention, the worst questions; every run is saved; compare two runs."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler import app_service as svc
from labeler.config import CHUNK_UNITS, CHUNKINGS, INDEX_TYPES, RETRIEVERS, RunConfig
from labeler.errors import ConfigError
from pages._common import guard, retriever, workspace

st.title("Evaluate", anchor=False)
s, path, corp, _ = workspace(with_retriever=False)
default = RunConfig()

# ---- run config form

with st.form("run-config"):
    st.markdown("**Run config**")
    r1, r2, r3, r4, r5 = st.columns([2, 3, 2, 2, 2])
    retr = r1.selectbox("Retriever", RETRIEVERS, key="cfg_retriever")
    model = r2.text_input("Embedding model", default.model, key="cfg_model",
                          help="The packaged MiniLM, a local sentence-transformers folder, or a hub name.")
    k = r3.number_input("k (documents retrieved)", 1, 1000, default.k, key="cfg_k")
    threshold = r4.text_input("Abstention threshold", "", key="cfg_threshold", placeholder="none",
                              help="Return nothing when the top score is below this; the sweep below helps choose it.")
    name = r5.text_input("Run name", "", key="cfg_name", placeholder="optional")
    with st.expander("Chunking, index, filters, fusion, reranker"):
        c1, c2, c3, c4 = st.columns(4)
        chunking = c1.selectbox("Chunking", CHUNKINGS, key="cfg_chunking")
        chunk_size = c2.number_input("Chunk size", 1, 10_000, default.chunk_size, key="cfg_chunk_size")
        chunk_overlap = c3.number_input("Chunk overlap", 0, 9_999, default.chunk_overlap, key="cfg_chunk_overlap")
        chunk_unit = c4.selectbox("Chunk unit", CHUNK_UNITS, key="cfg_chunk_unit")
        i1, i2, i3, i4, i5 = st.columns(5)
        index = i1.selectbox("Index", INDEX_TYPES, key="cfg_index")
        hnsw_m = i2.number_input("HNSW M", 2, 256, default.hnsw_m, key="cfg_hnsw_m")
        ef_search = i3.number_input("HNSW efSearch", 1, 4096, default.ef_search, key="cfg_ef_search")
        nlist = i4.number_input("IVF nlist", 1, 65_536, default.nlist, key="cfg_nlist")
        nprobe = i5.number_input("IVF nprobe", 1, 65_536, default.nprobe, key="cfg_nprobe")
        f1, f2, f3, f4 = st.columns([3, 1, 3, 1])
        filters = f1.multiselect("Metadata filters", [f"{key}={v}" for key, vs in corp.metadata_values().items()
                                                      for v in vs], key="cfg_filters",
                                 help="Values of one key are OR-ed, different keys AND-ed.")
        rrf_k = f2.number_input("RRF k", 1, 1000, default.rrf_k, key="cfg_rrf_k")
        reranker = f3.text_input("Reranker (CrossEncoder folder)", "", key="cfg_reranker", placeholder="none")
        rerank_top = f4.number_input("Rerank top", 1, 1000, default.rerank_top, key="cfg_rerank_top")
    submitted = st.form_submit_button("Run evaluation", type="primary", icon=":material/play_arrow:")

if submitted:
    try:
        abstain = float(threshold) if threshold.strip() else None
    except ValueError:
        st.error(f"Abstention threshold {threshold!r} is not a number. Hint: leave it empty for none.")
        st.stop()
    config = guard(svc.config_from_form, dict(
        retriever=retr, model=model.strip(), k=int(k), abstain_threshold=abstain, chunking=chunking,
        chunk_size=int(chunk_size), chunk_overlap=int(chunk_overlap), chunk_unit=chunk_unit, index=index,
        hnsw_m=int(hnsw_m), ef_search=int(ef_search), nlist=int(nlist), nprobe=int(nprobe), filters=filters,
        rrf_k=int(rrf_k), reranker=reranker.strip() or None, rerank_top=int(rerank_top)))
    ret = retriever(path, config)
    bar = st.progress(0.0, text="Retrieving…")
    record = guard(svc.run_evaluation, s, ret, config, name=name.strip(),
                   progress=lambda done, total, stage: bar.progress(done / total if total else 1.0,
                                                                    text=f"{stage}: {done} / {total} questions"))
    bar.empty()
    st.session_state["eval_run"] = record.run_id
    st.success(f"Run #{record.run_id} saved (config {record.config_hash}).")

runs = s.list_runs()
if not runs:
    st.info("No runs yet. Choose a config above and press **Run evaluation**: every run is saved with its config.")
    st.stop()

# ---- one run's results

ids = [r.run_id for r in runs]
labels = {r.run_id: svc.run_label(r) for r in runs}
if st.session_state.get("eval_run") not in ids:
    st.session_state["eval_run"] = ids[0]
st.subheader("Results", anchor=False)
v1, v2 = st.columns([3, 1])
run_id = v1.selectbox("Run", ids, key="eval_run", format_func=labels.get)
cutoff = v2.selectbox("Cutoff k", [1, 3, 5, 10, 100], index=3, key="eval_cutoff")
record = guard(s.load_run, run_id)
report = svc.report_of(record)
counts = record.summary.get("counts", {})
st.caption(f"{counts.get('answerable', 0)} answerable questions scored · {counts.get('unanswerable', 0)} unanswerable "
           f"· {counts.get('unjudged', 0)} not yet judged (left out) · config `{record.config_hash}`")

st.container(key="metrics").dataframe(
    pd.DataFrame(svc.metric_rows(report, cutoff)), hide_index=True, key="metrics_table", width=640,
    column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("mean", "ci95_low", "ci95_high")})

types = svc.per_type_rows(report, cutoff)
if types:
    st.markdown(f"**Per query type** (@{cutoff})")
    t1, t2 = st.columns([1, 1])
    frame = pd.DataFrame(types)
    t1.dataframe(frame, hide_index=True, key="per_type_table",
                 column_config={m: st.column_config.NumberColumn(format="%.3f") for m in svc.headline_measures(cutoff)})
    t2.bar_chart(frame, x="query_type", y=[f"ndcg@{cutoff}", f"recall@{cutoff}"], stack=False, height=260)

abstention = record.summary.get("abstention")
if abstention:
    st.markdown("**Unanswerable questions: abstaining when the top score is below a threshold**")
    a1, a2 = st.columns([2, 3])
    with a1:
        at = abstention.get("at_threshold")
        if at:
            st.metric("Unanswerable correctly left empty", f"{(at['unanswerable_abstained'] or 0):.0%}",
                      help=f"At threshold {at['threshold']:.3f}.")
            st.metric("Answerable wrongly left empty", f"{(at['answerable_abstained'] or 0):.0%}")
        suggested = abstention.get("suggested")
        if suggested:
            st.caption(f"Suggested threshold **{suggested['threshold']:.3f}**: balanced accuracy "
                       f"{suggested['balanced_accuracy']:.0%} ({abstention.get('rule', '')}).")
        elif not at:
            st.caption("Set an abstention threshold in the config to score it.")
    sweep = svc.sweep_rows(record)
    if sweep:
        a2.line_chart(pd.DataFrame(sweep), x="threshold", height=260)

st.markdown(f"**Worst questions** (retrieved documents with their grades, and the rank of the first relevant one)")
metric = st.selectbox("By metric", svc.headline_measures(cutoff), index=3, key="worst_metric")
for row in guard(svc.worst_questions, record, metric, 10):
    rank = row["first_relevant_rank"]
    title = (f"{row['query_id']} · {metric} {row[metric]:.3f} · first relevant at "
             f"{'rank ' + str(rank) if rank else 'none retrieved'} · {row['question']}")
    with st.expander(title):
        st.dataframe(pd.DataFrame(row["retrieved"]), hide_index=True)

# ---- history and comparison

st.subheader("History", anchor=False)
st.dataframe(pd.DataFrame(svc.history_rows(runs)), hide_index=True, key="history_table")

st.subheader("Compare two runs", anchor=False)
if len(runs) < 2:
    st.info("Run a second config to compare it with this one.")
    st.stop()
p1, p2, p3 = st.columns([2, 2, 1])
a_id = p1.selectbox("Baseline (A)", ids, index=1, key="compare_a", format_func=labels.get)
b_id = p2.selectbox("Candidate (B)", ids, index=0, key="compare_b", format_func=labels.get)
compare_metric = p3.selectbox("Per question by", svc.headline_measures(cutoff), index=3, key="compare_metric")
if a_id == b_id:
    st.info("Pick two different runs.")
    st.stop()
a, b = guard(s.load_run, a_id), guard(s.load_run, b_id)
try:
    result = svc.compare_runs(a, b, svc.headline_measures(cutoff))
except ConfigError as exc:
    st.error(str(exc))
    st.stop()
if not result.same_golden:
    st.warning("These runs were scored against different versions of the golden set; only the questions both "
               "scored are paired.")
if result.config_diff:
    st.caption("Config changes A → B: " + "; ".join(f"{k}: {va!r} → {vb!r}" for k, (va, vb) in result.config_diff.items()))
st.container(key="comparison").dataframe(pd.DataFrame(svc.comparison_rows(result)), hide_index=True, key="compare_table",
             column_config={c: st.column_config.NumberColumn(format="%.3f")
                            for c in ("A", "B", "B - A", "ci95_low", "ci95_high", "p_value")})
changes = svc.per_question_changes(result, b, compare_metric)
better = [r for r in changes if r["direction"] == "better"]
worse = [r for r in changes if r["direction"] == "worse"]
w1, w2 = st.columns(2)
w1.markdown(f"**Better in B** ({len(better)})")
w1.dataframe(pd.DataFrame(better, columns=["query_id", "change", "question"]), hide_index=True, key="better_table")
w2.markdown(f"**Worse in B** ({len(worse)})")
w2.dataframe(pd.DataFrame(worse, columns=["query_id", "change", "question"]), hide_index=True, key="worse_table")
