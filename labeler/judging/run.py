"""One simulation of a collection, as the `labeler simulate --json` object."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from labeler.errors import ConfigError
from labeler.judging.active import REGULARIZATION, ActiveOrder
from labeler.judging.allocation import FLOOR, VISIT, run_allocated
from labeler.judging.collection import SimulationCollection, open_collection, require_relevant
from labeler.judging.simulate import Oracle, QuestionRun, run_active, run_pool, simulate
from labeler.judging.stopping import StoppingRule
from labeler.judging.summary import summarize
from labeler.progress import Progress

ACTIVE_BUDGET = 100


def strategy_for(col: SimulationCollection, strategy: str, *, budget: int | None = None, stop_sample: int = 20,
                 patience: int = 10, min_grade: int = 1, regularization: float = REGULARIZATION):
    """The per-question strategy: (query_id, oracle) -> QuestionRun."""
    if strategy == "pool":
        return lambda qid, oracle: run_pool(col.pools[qid], oracle, budget)
    rule = StoppingRule(patience=patience, sample_size=stop_sample) if stop_sample else None

    def active(qid: str, oracle: Oracle) -> QuestionRun:
        model = ActiveOrder(col.features(qid), seed=qid, min_grade=min_grade, regularization=regularization)
        return run_active(model, oracle, budget or ACTIVE_BUDGET, rule=rule, seed=qid, min_grade=min_grade)

    return active


def stopping_summary(results: Mapping[str, QuestionRun], qrels: Mapping[str, Mapping[str, int]],
                     min_grade: int = 1) -> dict:
    """How honest the estimates were: the true number left when each was made, against its bound, and
    of the questions where one said "<= 1 left (95%)", how many really had at most one left."""
    made = covered = model_made = model_covered = done = done_true = 0
    done_by_model = 0
    for qid, run in results.items():
        relevant = {d for d, g in qrels.get(qid, {}).items() if g >= min_grade}

        def left(at: int) -> int:
            return len(relevant - set(run.judged[:at]))

        if run.estimate is not None:
            made += 1
            covered += left(run.estimate_at) <= run.estimate.upper
        if run.model_estimate is not None:
            model_made += 1
            model_covered += left(run.model_estimate_at) <= run.model_estimate.upper
        if run.stopped_at is not None:
            done += 1
            done_by_model += not run.estimate.done
            done_true += left(run.stopped_at) <= 1
    return {"estimated": made, "bound_held": covered, "model_estimated": model_made,
            "model_bound_held": model_covered, "done": done, "done_by_model_only": done_by_model,
            "done_and_at_most_one_left": done_true}


def simulate_collection(folder: str | Path, strategy: str, *, budget: int | None = None, stop_sample: int = 20,
                        patience: int = 10, runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
                        keep_scale: bool = False, min_grade: int = 1, regularization: float = REGULARIZATION,
                        collection: SimulationCollection | None = None, allocate: bool = False,
                        total: int | None = None, progress: Progress | None = None) -> dict:
    """Simulate `strategy` on a BEIR folder: {"strategy", "collection", "questions", "summary"}.

    `allocate` (active only, no stopping estimate): `total` judgments (default: as many as the whole
    pool) spread over the questions by what each still finds (labeler.judging.allocation), at most
    `budget` per question. Refused (ConfigError) for another strategy, or `total` without `allocate`:
    the result would name a strategy it did not run. `progress` is told how the embedding of the corpus
    goes, the first time (minutes on a few thousand documents)."""
    if (allocate or total) and strategy != "active" or total and not allocate:
        raise ConfigError("--allocate and --total go with --strategy active, --total only with --allocate",
                          hint="e.g. labeler simulate DATASET --strategy active --allocate --total 1000.")
    if min_grade < 1:
        raise ConfigError(f"--min-grade must be at least 1, got {min_grade}",
                          hint="relevant means grade >= it; a grade of 0 is a judged non-relevant document.")
    col = collection or open_collection(folder, keep_scale=keep_scale, progress=progress, min_grade=min_grade)
    qrels = col.qrels
    if collection is not None:  # opened by the caller: open_collection did not check it
        require_relevant(qrels, min_grade, col.folder)
    pools = col.pools
    if allocate:
        total = total or sum(len(p) for p in pools.values())
        models = {q: ActiveOrder(col.features(q), seed=q, min_grade=min_grade, regularization=regularization)
                  for q in col.query_ids}
        results = run_allocated(models, {q: Oracle(qrels.get(q, {})) for q in col.query_ids}, total,
                                budget=budget or ACTIVE_BUDGET, min_grade=min_grade)
    else:
        run_question = strategy_for(col, strategy, budget=budget, stop_sample=stop_sample, patience=patience,
                                    min_grade=min_grade, regularization=regularization)
        results = simulate(col.query_ids, run_question, qrels)
    each = {q: sum(qrels[q].get(d, 0) >= min_grade for d in pools[q]) for q in col.query_ids}
    summary = summarize({q: r.judged for q, r in results.items()}, qrels,
                        pool_sizes={q: len(pools[q]) for q in col.query_ids}, pool_relevant=sum(each.values()),
                        pool_relevant_each=each,
                        runs=runs, min_grade=min_grade)
    if allocate:
        summary["allocation"] = {"total": total, "floor": FLOOR, "visit": VISIT, "relevant_found": summary["relevant_found"]}
    elif strategy == "active" and stop_sample:
        summary["stopping"] = stopping_summary(results, qrels, min_grade)
    return {"strategy": strategy, "collection": str(col.folder),
            "questions": {q: r.to_dict() for q, r in results.items()}, "summary": summary}
