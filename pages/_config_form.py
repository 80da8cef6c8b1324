"""The Evaluate page's built-in pipeline: the run-config form (every RunConfig setting) and its run."""
from __future__ import annotations

from typing import Any

import streamlit as st

from labeler.config import CHUNK_UNITS, CHUNKINGS, INDEX_TYPES, MODES, RunConfig
from labeler.corpus import Corpus
from labeler_app import evaluate as ev
from labeler_app.access import Actor
from labeler_app.stores import Store
from labeler_app.text import inert
from labeler_pages._common import Keys, guard
from labeler_pages._eval_results import scroll_after_run
from labeler_pages._loaders import retriever


def pipeline_section(s: Store, me: Actor, corp: Corpus, path: str, stale: str) -> None:
    """The form; on submit, run the config over the corpus at `path` and save the run (shown below
    from this rerun's report, not read back)."""
    submitted = config_form(corp)
    if not submitted:
        return
    values, threshold, name = submitted
    try:
        values["abstain_threshold"] = float(threshold) if threshold.strip() else None
    except ValueError:
        st.error(f"Abstention threshold {inert(repr(threshold))} is not a number. Hint: leave it empty for none.")
        st.stop()
    config = guard(ev.config_from_form, values)
    ret = retriever(path, config)  # cached on the corpus and the build part: a new threshold or k reuses it
    bar = st.progress(0.0, text="Retrieving…")
    done = guard(ev.run_evaluation, s, me, ret, config, name=name, stale=stale, corpus_path=path,
                 progress=lambda done, total, stage: bar.progress(done / total if total else 1.0,
                                                                  text=f"{stage}: {done} / {total} questions"))
    bar.empty()
    st.session_state[Keys.EVAL_RUN], st.session_state[Keys.JUST_RUN] = done.record.run_id, done
    scroll_after_run()
    st.success(f"Run #{done.record.run_id} saved (config {done.record.config_hash}).")


def config_form(corp: Corpus) -> tuple[dict[str, Any], str, str] | None:
    """(RunConfig values, abstention threshold text, run name) when submitted, else None."""
    default = RunConfig()
    with st.form("run-config"):
        st.markdown("**Run config**")
        r1, r2, r3, r4, r5 = st.columns([2, 3, 2, 2, 2])
        values: dict[str, Any] = {"mode": r1.selectbox("Retrieval mode", MODES, key="cfg_mode")}
        values["model"] = r2.text_input("Embedding model", default.model, key="cfg_model",
                                        help="The packaged MiniLM, a local sentence-transformers folder, or a hub name.").strip()
        values["k"] = int(r3.number_input("Depth k (documents retrieved)", 1, 1000, default.k, key="cfg_k"))
        threshold = r4.text_input("Abstention threshold", "", key="cfg_threshold", placeholder="none",
                                  help="Return nothing when the top score is below this; the sweep below helps choose it.")
        name = r5.text_input("Run name", "", key="cfg_name", placeholder="optional")
        with st.expander("Chunking, index, filters, fusion, reranker"):
            c1, c2, c3, c4 = st.columns(4)
            values["chunking"] = c1.selectbox("Chunking", CHUNKINGS, key="cfg_chunking")
            values["chunk_size"] = int(c2.number_input("Chunk size", 1, 10_000, default.chunk_size, key="cfg_chunk_size"))
            values["chunk_overlap"] = int(c3.number_input("Chunk overlap", 0, 9_999, default.chunk_overlap,
                                                          key="cfg_chunk_overlap"))
            values["chunk_unit"] = c4.selectbox("Chunk unit", CHUNK_UNITS, key="cfg_chunk_unit")
            i1, i2, i3, i4, i5 = st.columns(5)
            values["index"] = i1.selectbox("Index", INDEX_TYPES, key="cfg_index")
            values["hnsw_m"] = int(i2.number_input("HNSW M", 2, 256, default.hnsw_m, key="cfg_hnsw_m"))
            values["ef_search"] = int(i3.number_input("HNSW efSearch", 1, 4096, default.ef_search, key="cfg_ef_search"))
            values["nlist"] = int(i4.number_input("IVF nlist", 1, 65_536, default.nlist, key="cfg_nlist"))
            values["nprobe"] = int(i5.number_input("IVF nprobe", 1, 65_536, default.nprobe, key="cfg_nprobe"))
            f1, f2, f3, f4 = st.columns([3, 1, 3, 1])
            values["filters"] = f1.multiselect(
                "Metadata filters", [f"{key}={v}" for key, vs in corp.metadata_values().items() for v in vs],
                key="cfg_filters", help="Values of one key are OR-ed, different keys AND-ed.")
            values["rrf_k"] = int(f2.number_input("RRF k", 1, 1000, default.rrf_k, key="cfg_rrf_k"))
            values["reranker"] = f3.text_input("Reranker (CrossEncoder folder)", "", key="cfg_reranker",
                                               placeholder="none").strip() or None
            values["rerank_top"] = int(f4.number_input("Rerank top", 1, 1000, default.rerank_top, key="cfg_rerank_top"))
        submitted = st.form_submit_button("Run evaluation", type="primary", icon=":material/play_arrow:")
    return (values, threshold, name.strip()) if submitted else None
