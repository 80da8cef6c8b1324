"""What a simulation achieved, recomputed from its judged orders and the full qrels alone.

Judgments are counted at a per-question budget `b`: every question has had its first `b`
judgments (fewer if it stopped), so `judgments(b) = sum_q min(b, len(judged_q))` and
`found(b) = relevant among those`. "Judgments to reach 90%" is `judgments(b)` at the smallest
`b` with `found(b) >= 0.9 * relevant`; null when the budget never gets there.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

RECALL_TARGETS = (0.5, 0.8, 0.9, 0.95)


def _relevant(qrels: Mapping[str, Mapping[str, int]], qid: str, min_grade: int) -> set[str]:
    return {d for d, g in qrels.get(qid, {}).items() if g >= min_grade}


def recall_curve(judged: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], *,
                 min_grade: int = 1) -> list[dict]:
    """[{budget, judgments, relevant_found}] for every per-question budget 1..longest order."""
    relevant = {q: _relevant(qrels, q, min_grade) for q in judged}
    hits = {q: [d in relevant[q] for d in order] for q, order in judged.items()}
    longest = max((len(o) for o in judged.values()), default=0)
    curve, judgments, found = [], 0, 0
    for b in range(1, longest + 1):
        for flags in hits.values():
            if b <= len(flags):
                judgments += 1
                found += flags[b - 1]
        curve.append({"budget": b, "judgments": judgments, "relevant_found": found})
    return curve


def judgments_to_reach(curve: Sequence[Mapping], target: float) -> int | None:
    """Judgments at the first point of the curve with at least `target` relevant found; None if never."""
    for point in curve:
        if point["relevant_found"] >= target:
            return point["judgments"]
    return None


def judgments_to_reach_each(judged: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                            targets: Mapping[str, int], *, min_grade: int = 1) -> dict:
    """Each question judged until it has found `targets[q]` relevant documents (any relevant, in the
    pool or not; a target of 0 costs nothing): {"judgments": summed over questions, "not_reached":
    questions whose order ended first, counted with all their judgments (so then a lower bound)}."""
    total = missed = 0
    for q, target in targets.items():
        if target <= 0:
            continue
        relevant, found, order = _relevant(qrels, q, min_grade), 0, judged.get(q, ())
        for i, d in enumerate(order, start=1):
            found += d in relevant
            if found >= target:
                total += i
                break
        else:
            total, missed = total + len(order), missed + 1
    return {"judgments": total, "not_reached": missed}


def found_within(judged: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                 budgets: Mapping[str, int], *, min_grade: int = 1) -> int:
    """Relevant documents among each question's first `budgets[q]` judgments."""
    return sum(len(_relevant(qrels, q, min_grade).intersection(order[:budgets.get(q, 0)]))
               for q, order in judged.items())


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall's tau-b of two score lists (None when either is constant or there are fewer than 2)."""
    from scipy.stats import kendalltau

    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    tau = kendalltau(a, b).statistic
    return None if math.isnan(tau) else round(float(tau), 4)


def ndcg10_means(qrels: Mapping[str, Mapping[str, int]], runs: Mapping[str, Mapping[str, Mapping[str, float]]],
                 query_ids: Sequence[str], *, min_grade: int = 1) -> dict[str, float]:
    """Mean nDCG@10 of each run over `query_ids` (trec_eval semantics; a question with no relevant
    judgment yet scores 0)."""
    from labeler.metrics import calc_per_query

    out = {}
    for name, run in runs.items():
        per_query = calc_per_query(["ndcg@10"], qrels, run, query_ids=query_ids, min_grade=min_grade)
        out[name] = sum(v["ndcg@10"] for v in per_query.values()) / len(query_ids) if query_ids else 0.0
    return out


def tau_curve(judged: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
              runs: Mapping[str, Mapping[str, Mapping[str, float]]], budgets: Sequence[int], *,
              min_grade: int = 1) -> list[dict]:
    """Kendall tau between the systems' order by nDCG@10 on the judgments made within each budget and
    on the full qrels, with the judgments spent."""
    qids = list(judged)
    names = list(runs)
    full = ndcg10_means(qrels, runs, qids, min_grade=min_grade)
    out = []
    for b in budgets:
        partial = {q: {d: qrels.get(q, {}).get(d, 0) for d in order[:b]} for q, order in judged.items()}
        means = ndcg10_means(partial, runs, qids, min_grade=min_grade)
        out.append({"budget": b, "judgments": sum(min(b, len(o)) for o in judged.values()),
                    "tau": kendall_tau([means[n] for n in names], [full[n] for n in names]),
                    "ndcg@10": {n: round(means[n], 4) for n in names}})
    return out


def summarize(judged: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]], *,
              pool_sizes: Mapping[str, int], pool_relevant: int,
              pool_relevant_each: Mapping[str, int] | None = None,
              runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
              tau_budgets: Sequence[int] = (1, 2, 5, 10, 20, 50, 100), min_grade: int = 1) -> dict:
    """The simulator's `summary`: recall curve and targets, relevant found at the pool's budget, and tau."""
    total = sum(len(_relevant(qrels, q, min_grade)) for q in judged)
    curve = recall_curve(judged, qrels, min_grade=min_grade)
    summary = {
        "questions": len(judged), "relevant": total,
        "judgments": sum(len(o) for o in judged.values()),
        "relevant_found": curve[-1]["relevant_found"] if curve else 0,
        "judgments_to_reach": {f"{round(t * 100)}%": judgments_to_reach(curve, t * total) for t in RECALL_TARGETS},
        "pool": {"judgments": sum(pool_sizes.values()), "relevant": pool_relevant,
                 "relevant_found_within_pool_budget": found_within(judged, qrels, pool_sizes, min_grade=min_grade),
                 # what this run spent of that budget: less where --budget or a stop ended a question first
                 "judgments_within_pool_budget": sum(min(len(o), pool_sizes.get(q, 0)) for q, o in judged.items()),
                 "judgments_to_reach_90%_of_pool_relevant": judgments_to_reach(curve, 0.9 * pool_relevant)},
        "curve": curve,
    }
    if pool_relevant_each is not None:  # each question judged until it has 90% of what its pool holds
        summary["pool"]["judgments_to_reach_90%_of_pool_relevant_each"] = judgments_to_reach_each(
            judged, qrels, {q: math.ceil(0.9 * r) for q, r in pool_relevant_each.items()}, min_grade=min_grade)
    if runs:
        longest = max((len(o) for o in judged.values()), default=0)
        budgets = sorted({b for b in tau_budgets if b < longest} | {longest})
        summary["tau"] = tau_curve(judged, qrels, runs, budgets, min_grade=min_grade)
    return summary
