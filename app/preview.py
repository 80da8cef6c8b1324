"""Quick metric previews while labelling: how the pooled retrievers rank what has been judged so far.

From rankings already computed (the pooled candidates carry each retriever's rank), so a grade
click never searches again; scored by the core's metric functions (labeler.metrics), the numbers
an Evaluate run of the same rankings would print. A pooled ranking holds only that retriever's
top k, so the preview is exact at cutoff k and below: recall@10 and nDCG@10 with k = 10.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from labeler.candidates import Candidate
from labeler.metrics import MRR, Judged, Qrels, Recall, Run, calc_aggregate, calc_per_query, nDCG
from labeler_app.text import inert
from labeler_storage import Store

PREVIEW_K = 10  # the pool's depth per retriever (labeler.candidates.pool_candidates)
RETRIEVER_NAMES = {"bm25": "BM25"}
QUESTION_MEASURES = (MRR @ PREVIEW_K, Recall @ PREVIEW_K, nDCG @ PREVIEW_K, Judged @ PREVIEW_K)
SET_MEASURES = (Recall @ PREVIEW_K, MRR @ PREVIEW_K, nDCG @ PREVIEW_K, Judged @ PREVIEW_K)


@dataclass(frozen=True)
class RankerPreview:
    """One retriever's scores on the current question's judgments."""

    system: str  # "dense", "BM25", or a saved system's name
    first_relevant: int | None  # rank of the first relevant document in its top k; None: none there
    recall: float  # recall@k
    ndcg: float  # nDCG@k
    judged: float  # judged@k: share of its top k with any judgment


def ranked_lists(candidates: Sequence[Candidate], systems: Iterable[str]) -> dict[str, list[str]]:
    """system -> its ranked doc ids (best first), read from the pooled candidates' ranks."""
    lists: dict[str, list[str]] = {}
    for name in systems:
        ranked = sorted((c.found_by[name], c.doc_id) for c in candidates if name in c.found_by)
        if ranked:
            lists[name] = [doc_id for _, doc_id in ranked]
    return lists


def run_of(query_id: str, ranked: Sequence[str]) -> Run:
    """A ranked list as a run whose scores keep its order (rank 1 scores highest, no ties)."""
    return {query_id: {doc_id: float(len(ranked) - i) for i, doc_id in enumerate(ranked)}}


def golden_grades(consensus: Mapping[str, int], adjudicated: Mapping[str, int]) -> dict[str, int]:
    """The grades a question exports: the adjudicated grade where one exists, else the consensus."""
    return {**consensus, **adjudicated}


def question_preview(query_id: str, grades: Mapping[str, int], candidates: Sequence[Candidate],
                     systems: Iterable[str], *, min_grade: int = 1) -> list[RankerPreview]:
    """Each pooled system's scores on this question's judgments so far ([] while none is relevant:
    every measure would be 0, which says nothing about the retrievers)."""
    if not any(g >= min_grade for g in grades.values()):
        return []
    qrels: Qrels = {query_id: dict(grades)}
    previews = []
    for name, ranked in ranked_lists(candidates, systems).items():
        values = calc_per_query(QUESTION_MEASURES, qrels, run_of(query_id, ranked), min_grade=min_grade)[query_id]
        rr = values[str(MRR @ PREVIEW_K)]
        previews.append(RankerPreview(RETRIEVER_NAMES.get(name, name), round(1 / rr) if rr else None,
                                      values[str(Recall @ PREVIEW_K)], values[str(nDCG @ PREVIEW_K)],
                                      values[str(Judged @ PREVIEW_K)]))
    return previews


def preview_line(previews: Sequence[RankerPreview]) -> str:
    """One markdown line, the systems side by side: `Preview on the grades so far (dense, BM25): first
    relevant #1, #2 · recall@10 0.67, 0.67 · nDCG@10 0.61, 0.45 · judged@10 0.40, 0.40` ("" for none)."""
    if not previews:
        return ""

    def each(values: Iterable[str]) -> str:
        return ", ".join(values)

    names = each(inert(p.system) for p in previews)  # a saved system's name is user text
    first = each(f"#{p.first_relevant}" if p.first_relevant else "none" for p in previews)
    return (f"Preview on the grades so far ({names}): first relevant {first} · "
            f"recall@{PREVIEW_K} {each(f'{p.recall:.2f}' for p in previews)} · "
            f"nDCG@{PREVIEW_K} {each(f'{p.ndcg:.2f}' for p in previews)} · "
            f"judged@{PREVIEW_K} {each(f'{p.judged:.2f}' for p in previews)}")


@dataclass(frozen=True)
class SetPreview:
    """A retriever's means over the golden set's answerable judged questions."""

    system: str
    n_questions: int
    means: Mapping[str, float]  # "recall@10", "mrr@10", "ndcg@10", "judged@10"


def set_preview(qrels: Qrels, unanswerable: Iterable[str], rankings: Mapping[str, Mapping[str, Sequence[str]]], *,
                min_grade: int = 1) -> list[SetPreview]:
    """Means of recall@k, MRR@k, nDCG@k and judged@k per system (`rankings`: system -> {query_id:
    ranked doc ids}), over the answerable questions with a judgment; a question a system has no
    ranking for scores 0 (trec_eval -c)."""
    skip = set(unanswerable)
    query_ids = [q for q, judged in qrels.items() if judged and q not in skip]
    if not query_ids:
        return []
    previews = []
    for name, per_query in rankings.items():
        run: Run = {}
        for query_id in query_ids:
            run.update(run_of(query_id, per_query.get(query_id, ())))
        means = calc_aggregate(SET_MEASURES, qrels, run, query_ids=query_ids, min_grade=min_grade)
        previews.append(SetPreview(RETRIEVER_NAMES.get(name, name), len(query_ids), means))
    return previews


def golden_preview(store: Store, pooled_of: Callable[[str], Sequence[Candidate]],
                   systems: Sequence[str] = ("dense", "bm25")) -> list[SetPreview]:
    """The whole golden set's preview, from each question's pooled candidates (`pooled_of(question)`:
    the Label page's cached pool, so a question labelled already costs no search)."""
    golden = store.golden.export()
    unanswerable = [q.query_id for q in golden if q.unanswerable]
    rankings: dict[str, dict[str, list[str]]] = {name: {} for name in systems}
    for q in golden:
        if q.relevance and not q.unanswerable:
            lists = ranked_lists(pooled_of(q.question), systems)
            for name in systems:
                rankings[name][q.query_id] = lists.get(name, [])
    return set_preview(golden.qrels(), unanswerable, rankings)


def preview_rows(previews: Sequence[SetPreview]) -> list[dict[str, object]]:
    """The Golden set page's table: one row per system, each metric beside its judged@k."""
    return [{"system": p.system, "questions": p.n_questions,
             **{m: round(p.means[m], 4) for m in (f"recall@{PREVIEW_K}", f"mrr@{PREVIEW_K}", f"ndcg@{PREVIEW_K}",
                                                   f"judged@{PREVIEW_K}")}} for p in previews]
