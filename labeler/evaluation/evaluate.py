"""Score a run against a golden set: `evaluate` over plain shapes (qrels `{qid: {doc: grade}}`,
run `{qid: {doc: score}}`, `query_types {qid: type}`, `unanswerable` a set of qids) and
`evaluate_golden`, the thin wrapper over a `GoldenSet`. See `report` for which questions count;
run queries outside the golden set are ignored and counted (`extra_in_run`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from labeler.evaluation.abstention import abstention_sweep
from labeler.evaluation.report import SCORED, UNANSWERABLE, UNJUDGED, EvalReport, QueryResult, RankedDoc, frozen
from labeler.evaluation.uncertainty import CI_RESAMPLES, bootstrap_ci
from labeler.metrics import (DEFAULT_CUTOFFS, Measure, compute, judge_run, parse_measures, standard_measures,
                             with_coverage)
from labeler.metrics.rankings import Qrels, Run

if TYPE_CHECKING:  # pragma: no cover
    from labeler.golden import GoldenSet

UNTYPED = "(untyped)"


def evaluate(
    qrels: Qrels,
    run: Run,
    measures: Iterable[str | Measure] | None = None,
    *,
    cutoffs: Iterable[int] = DEFAULT_CUTOFFS,
    min_grade: int = 1,
    query_ids: Sequence[str] | None = None,
    query_types: Mapping[str, str] | None = None,
    unanswerable: Iterable[str] = (),
    abstain_threshold: float | None = None,
    top_k: int = 10,
    ci_resamples: int = CI_RESAMPLES,
    seed: int = 0,
    questions: Mapping[str, str] | None = None,
) -> EvalReport:
    """Score `run` against `qrels` (see the module docstring for which questions count).

    `measures` defaults to `standard_measures(cutoffs)`. `query_ids` is the golden set's
    question list (default: the qrels' queries, then the unanswerable ones); `questions` their
    texts, kept in the report. Inputs are not modified.
    """
    measure_list = with_coverage(parse_measures(measures)) if measures is not None else standard_measures(cutoffs)
    names = tuple(str(m) for m in measure_list)
    unanswerable = set(unanswerable)
    if query_ids is None:
        query_ids = list(dict.fromkeys([*qrels, *sorted(unanswerable)]))
    query_ids = list(dict.fromkeys(query_ids))
    types = query_types or {}

    rankings = judge_run(qrels, run, query_ids, min_grade=min_grade)
    values = compute(measure_list, rankings)
    status = [UNANSWERABLE if q in unanswerable else SCORED if qrels.get(q) else UNJUDGED for q in query_ids]
    scored_rows = np.array([s == SCORED for s in status], dtype=bool)

    per_query = {}
    value_lists = {name: values[name].tolist() for name in names}
    first_rank = rankings.first_relevant_rank.tolist()
    num_rel = rankings.num_rel.tolist()
    for i, query_id in enumerate(query_ids):
        ranking = run.get(query_id)
        judgments = qrels.get(query_id, {})
        top = []
        if ranking:
            doc_ids = list(ranking)
            for column, score in zip(rankings.doc_order[i, :top_k].tolist(), rankings.ranked_scores[i, :top_k].tolist()):
                if column < 0:
                    break
                doc_id = doc_ids[column]
                top.append(RankedDoc(doc_id, score, judgments.get(doc_id)))
        is_scored = status[i] == SCORED
        per_query[query_id] = QueryResult(
            query_id=query_id,
            status=status[i],
            query_type=types.get(query_id, ""),
            metrics=frozen({name: value_lists[name][i] for name in names} if is_scored else {}),
            first_relevant_rank=first_rank[i] or None,
            num_relevant=num_rel[i],
            in_run=query_id in run,
            top_score=float(rankings.ranked_scores[i, 0]) if ranking else None,
            top_k=tuple(top),
        )

    matrix = np.array([values[name][scored_rows] for name in names]).reshape(len(names), int(scored_rows.sum()))
    means = matrix.mean(axis=1) if matrix.shape[1] else np.full(len(names), np.nan)
    ci = bootstrap_ci(matrix, resamples=ci_resamples, seed=seed)

    type_of_row = [types.get(q, "") or UNTYPED for q in query_ids]
    per_type, type_counts = {}, {}
    if query_types is not None:
        for query_type in sorted({type_of_row[i] for i in np.flatnonzero(scored_rows)}):
            rows = scored_rows & np.array([t == query_type for t in type_of_row])
            per_type[query_type] = frozen({name: float(values[name][rows].mean()) for name in names})
            type_counts[query_type] = int(rows.sum())

    golden = set(query_ids)
    scored_ids = [q for q, s in zip(query_ids, status) if s == SCORED]
    counts = {
        "questions": len(query_ids),
        "answerable": len(scored_ids),
        "unanswerable": status.count(UNANSWERABLE),
        "unjudged": status.count(UNJUDGED),
        "no_relevant": int((rankings.num_rel[scored_rows] == 0).sum()),
        "missing_from_run": sum(1 for q in scored_ids if q not in run),
        "extra_in_run": sum(1 for q in run if q not in golden),
    }

    abstention = None
    if counts["unanswerable"] or abstain_threshold is not None:
        top_scores = {q: r.top_score for q, r in per_query.items()}
        abstention = abstention_sweep(
            [top_scores[q] for q in scored_ids],
            [top_scores[q] for q, s in zip(query_ids, status) if s == UNANSWERABLE],
            threshold=abstain_threshold,
        )

    return EvalReport(
        measures=names,
        metrics=frozen({name: float(v) for name, v in zip(names, means)}),
        ci95=frozen({name: (float(lo), float(hi)) for name, (lo, hi) in zip(names, ci)}),
        per_type=frozen(per_type),
        type_counts=frozen(type_counts),
        per_query=frozen(per_query),
        counts=frozen(counts),
        abstention=abstention,
        settings=frozen({"min_grade": rankings.min_grade, "ci_resamples": ci_resamples, "seed": seed,
                          "top_k": top_k, "ci_method": "percentile bootstrap over questions"}),
        questions=frozen({q: questions[q] for q in query_ids if q in questions} if questions else {}),
    )


def evaluate_golden(golden: "GoldenSet", run: Run, measures: Iterable[str | Measure] | None = None,
                    **options: Any) -> EvalReport:
    """`evaluate` over a GoldenSet: its qrels, query types, unanswerable flags and question order."""
    return evaluate(
        golden.qrels(), run, measures,
        query_ids=[q.query_id for q in golden.queries],
        query_types=golden.query_types(),
        unanswerable={q.query_id for q in golden.queries if q.unanswerable},
        questions=golden.questions(),
        **options,
    )


