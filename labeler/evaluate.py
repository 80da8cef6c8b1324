"""Score a run against a golden set: means with bootstrap CIs, per type, per question, worst
questions, abstention on unanswerable questions, and paired comparison of two runs.

Core functions take plain shapes (qrels `{qid: {doc: grade}}`, run `{qid: {doc: score}}`,
`query_types {qid: type}`, `unanswerable` a set of qids) and return frozen dataclasses;
`evaluate_golden` is the thin wrapper over a `GoldenSet`.

Which questions count:
- **scored** ("answerable"): not marked unanswerable and at least one judgment (even grade 0,
  as trec_eval); one missing from the run scores 0 on every metric (trec_eval -c);
- **unanswerable**: scored separately, by abstention (below);
- **unjudged**: not marked unanswerable and no judgment yet: listed and counted, not scored
  (trec_eval does not know them either);
- run queries outside the golden set are ignored and counted (`extra_in_run`).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from labeler.errors import ConfigError, InputError
from labeler.metrics import Measure, compute, judge_run, parse_measure, parse_measures, standard_measures
from labeler.metrics.rankings import Qrels, Run

if TYPE_CHECKING:  # pragma: no cover
    from labeler.golden import GoldenSet

DEFAULT_CUTOFFS = (1, 3, 5, 10, 100)
CI_RESAMPLES = 2_000
TEST_RESAMPLES = 10_000
SCORED, UNANSWERABLE, UNJUDGED = "scored", "unanswerable", "unjudged"
UNTYPED = "(untyped)"
SUGGESTION_RULE = (
    "largest balanced accuracy = (share of unanswerable abstained + share of answerable answered) / 2 "
    "(Youden's J); ties go to the lowest threshold"
)


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


# ---------------------------------------------------------------------------------------------
# Result types


@dataclass(frozen=True)
class RankedDoc:
    """One retrieved document as shown in a report: its grade is None when unjudged."""

    doc_id: str
    score: float
    grade: int | float | None


@dataclass(frozen=True)
class QueryResult:
    """Everything about one question: status, metric values, first relevant rank, top k."""

    query_id: str
    status: str
    query_type: str = ""
    metrics: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    first_relevant_rank: int | None = None
    num_relevant: int = 0
    in_run: bool = False
    top_score: float | None = None
    top_k: tuple[RankedDoc, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Metric values first, then the other fields (the `per_query` entry of the JSON output)."""
        return {
            **self.metrics,
            "status": self.status,
            "query_type": self.query_type,
            "first_relevant_rank": self.first_relevant_rank,
            "num_relevant": self.num_relevant,
            "in_run": self.in_run,
            "top_score": _finite_or_none(self.top_score),
            "top_k": [{"doc_id": d.doc_id, "score": _finite_or_none(d.score), "grade": d.grade} for d in self.top_k],
        }

    @classmethod
    def from_dict(cls, query_id: str, data: Mapping[str, Any], measures: Sequence[str]) -> "QueryResult":
        """Inverse of to_dict."""
        top_score = data.get("top_score")
        return cls(
            query_id=query_id,
            status=data.get("status", SCORED),
            query_type=data.get("query_type", ""),
            metrics=_frozen({m: float(data[m]) for m in measures if m in data and data[m] is not None}),
            first_relevant_rank=data.get("first_relevant_rank"),
            num_relevant=int(data.get("num_relevant", 0)),
            in_run=bool(data.get("in_run", False)),
            top_score=None if top_score is None else float(top_score),
            top_k=tuple(RankedDoc(d["doc_id"], float("-inf") if d.get("score") is None else float(d["score"]),
                                  d.get("grade")) for d in data.get("top_k", ())),
        )


@dataclass(frozen=True)
class AbstentionPoint:
    """Outcome of abstaining (returning nothing) when the top score is below `threshold`.

    A share is None when its group of questions is empty.
    """

    threshold: float
    unanswerable_abstained: float | None   # correct: unanswerable questions left with nothing
    answerable_abstained: float | None     # wrong: answerable questions left with nothing

    @property
    def balanced_accuracy(self) -> float | None:
        """(unanswerable abstained + answerable answered) / 2; None unless both groups exist."""
        if self.unanswerable_abstained is None or self.answerable_abstained is None:
            return None
        return (self.unanswerable_abstained + 1.0 - self.answerable_abstained) / 2.0

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "unanswerable_abstained": self.unanswerable_abstained,
                "answerable_abstained": self.answerable_abstained, "balanced_accuracy": self.balanced_accuracy}


@dataclass(frozen=True)
class Abstention:
    """Abstention on the top score: at a given threshold, over a sweep, and the suggested one."""

    answerable: int
    unanswerable: int
    threshold: float | None
    at_threshold: AbstentionPoint | None
    sweep: tuple[AbstentionPoint, ...]
    suggested: AbstentionPoint | None
    rule: str = SUGGESTION_RULE

    def to_dict(self) -> dict[str, Any]:
        return {
            "answerable": self.answerable, "unanswerable": self.unanswerable, "threshold": self.threshold,
            "at_threshold": self.at_threshold.to_dict() if self.at_threshold else None,
            "suggested": self.suggested.to_dict() if self.suggested else None,
            "rule": self.rule, "sweep": [p.to_dict() for p in self.sweep],
        }


@dataclass(frozen=True)
class EvalReport:
    """Means over the scored (answerable) questions, their 95% CIs, per type, per question, counts."""

    measures: tuple[str, ...]
    metrics: Mapping[str, float]
    ci95: Mapping[str, tuple[float, float]]
    per_type: Mapping[str, Mapping[str, float]]
    type_counts: Mapping[str, int]
    per_query: Mapping[str, QueryResult]
    counts: Mapping[str, int]
    abstention: Abstention | None = None
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def scored(self) -> tuple[QueryResult, ...]:
        """The questions the means are taken over, in golden-set order."""
        return tuple(r for r in self.per_query.values() if r.status == SCORED)

    def values(self, metric: str | Measure) -> dict[str, float]:
        """{query_id: value} of one metric over the scored questions."""
        name = str(parse_measure(metric))
        self._check_metric(name)
        return {r.query_id: r.metrics[name] for r in self.scored()}

    def worst(self, metric: str | Measure, n: int = 5) -> tuple[QueryResult, ...]:
        """The n scored questions with the lowest value of `metric` (ties by query id)."""
        name = str(parse_measure(metric))
        self._check_metric(name)
        return tuple(sorted(self.scored(), key=lambda r: (r.metrics[name], r.query_id))[:max(n, 0)])

    def _check_metric(self, name: str) -> None:
        if name not in self.measures:
            raise ConfigError(f"metric {name} was not computed in this report",
                              hint=f"choose one of {', '.join(self.measures)}.")

    def to_dict(self) -> dict[str, Any]:
        """The `--json` shape: metrics, ci95, per_type, per_query, counts (+ abstention, settings)."""
        return {
            "measures": list(self.measures),
            "metrics": {m: _finite_or_none(v) for m, v in self.metrics.items()},
            "ci95": {m: [_finite_or_none(lo), _finite_or_none(hi)] for m, (lo, hi) in self.ci95.items()},
            "per_type": {t: dict(v) for t, v in self.per_type.items()},
            "per_type_counts": dict(self.type_counts),
            "per_query": {q: r.to_dict() for q, r in self.per_query.items()},
            "counts": dict(self.counts),
            "abstention": self.abstention.to_dict() if self.abstention else None,
            "settings": dict(self.settings),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EvalReport":
        """Rebuild a report from its `to_dict` (e.g. a saved `labeler score --json` output).

        The abstention sweep is not rebuilt (it is only needed when the run is at hand).
        """
        measures = tuple(data.get("measures") or data["metrics"].keys())
        nan = float("nan")
        return cls(
            measures=measures,
            metrics=_frozen({m: nan if v is None else float(v) for m, v in data["metrics"].items()}),
            ci95=_frozen({m: tuple(nan if x is None else float(x) for x in v) for m, v in data.get("ci95", {}).items()}),
            per_type=_frozen({t: _frozen(v) for t, v in data.get("per_type", {}).items()}),
            type_counts=_frozen(data.get("per_type_counts", {})),
            per_query=_frozen({q: QueryResult.from_dict(q, v, measures) for q, v in data["per_query"].items()}),
            counts=_frozen(data.get("counts", {})),
            abstention=None,
            settings=_frozen(data.get("settings", {})),
        )


# ---------------------------------------------------------------------------------------------
# Evaluation


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
) -> EvalReport:
    """Score `run` against `qrels` (see the module docstring for which questions count).

    `measures` defaults to `standard_measures(cutoffs)`. `query_ids` is the golden set's
    question list (default: the qrels' queries, then the unanswerable ones). Inputs are not
    modified.
    """
    measure_list = parse_measures(measures) if measures is not None else standard_measures(cutoffs)
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
            metrics=_frozen({name: value_lists[name][i] for name in names} if is_scored else {}),
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
            per_type[query_type] = _frozen({name: float(values[name][rows].mean()) for name in names})
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
        metrics=_frozen({name: float(v) for name, v in zip(names, means)}),
        ci95=_frozen({name: (float(lo), float(hi)) for name, (lo, hi) in zip(names, ci)}),
        per_type=_frozen(per_type),
        type_counts=_frozen(type_counts),
        per_query=_frozen(per_query),
        counts=_frozen(counts),
        abstention=abstention,
        settings=_frozen({"min_grade": rankings.min_grade, "ci_resamples": ci_resamples, "seed": seed,
                          "top_k": top_k, "ci_method": "percentile bootstrap over questions"}),
    )


def evaluate_golden(golden: "GoldenSet", run: Run, measures: Iterable[str | Measure] | None = None,
                    **options: Any) -> EvalReport:
    """`evaluate` over a GoldenSet: its qrels, query types, unanswerable flags and question order."""
    return evaluate(
        golden.qrels(), run, measures,
        query_ids=[q.query_id for q in golden.queries],
        query_types=golden.query_types(),
        unanswerable={q.query_id for q in golden.queries if q.unanswerable},
        **options,
    )


# ---------------------------------------------------------------------------------------------
# Uncertainty


def bootstrap_ci(values: np.ndarray, *, resamples: int = CI_RESAMPLES, seed: int = 0,
                 level: float = 0.95) -> np.ndarray:
    """Percentile bootstrap CI of the mean of each row of `values` (metrics x questions).

    All rows share the same resamples of questions. Returns (rows, 2) [lo, hi]; NaN when
    there are no questions. Reproducible for a given seed.
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    m, n = values.shape
    if n == 0 or resamples < 1:
        return np.full((m, 2), np.nan)
    rng = np.random.default_rng(seed)
    means = np.empty((m, resamples))
    block = max(1, min(resamples, 2_000_000 // n))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        # How often each question is drawn in each resample (n draws with replacement).
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size)
        means[:, start:start + size] = values @ counts.T / n
    tail = (1.0 - level) / 2.0 * 100.0
    return np.percentile(means, [tail, 100.0 - tail], axis=1).T


def paired_randomization_test(differences: Sequence[float], *, resamples: int = TEST_RESAMPLES,
                              seed: int = 0) -> float:
    """Two-sided p-value that the mean paired difference is 0, by random sign flips.

        p = (1 + #{flips: |mean(s * d)| >= |mean(d)|}) / (1 + resamples)

    No questions, or all differences 0, gives p = 1.
    """
    d = np.asarray(differences, dtype=np.float64)
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(d.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    block = max(1, min(resamples, 2_000_000 // n))
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        signs = rng.integers(0, 2, size=(size, n)).astype(np.float64) * 2.0 - 1.0
        hits += int((np.abs(signs @ d) / n >= observed - 1e-12).sum())
    return (hits + 1) / (resamples + 1)


# ---------------------------------------------------------------------------------------------
# Abstention


def abstention_at(top_answerable: Sequence[float | None], top_unanswerable: Sequence[float | None],
                  threshold: float) -> AbstentionPoint:
    """Shares abstained on when the system returns nothing for a top score below `threshold`.

    A question with no retrieved document (top score None) always counts as abstained.
    """
    def share(tops: Sequence[float | None]) -> float | None:
        if not tops:
            return None
        return sum(1 for t in tops if t is None or t < threshold) / len(tops)

    return AbstentionPoint(float(threshold), share(top_unanswerable), share(top_answerable))


def abstention_sweep(top_answerable: Sequence[float | None], top_unanswerable: Sequence[float | None], *,
                     threshold: float | None = None) -> Abstention:
    """Abstention at every distinct top score as the threshold, and the suggested threshold.

    Suggested (needs both groups): the largest balanced accuracy (Youden's J); ties go to the
    lowest threshold, i.e. the one that abstains least.
    """
    candidates = sorted({t for t in [*top_answerable, *top_unanswerable] if t is not None and math.isfinite(t)})
    sweep = tuple(abstention_at(top_answerable, top_unanswerable, t) for t in candidates)
    suggested = None
    if top_answerable and top_unanswerable and sweep:
        best = max(p.balanced_accuracy for p in sweep)
        suggested = next(p for p in sweep if p.balanced_accuracy >= best - 1e-12)
    return Abstention(
        answerable=len(top_answerable),
        unanswerable=len(top_unanswerable),
        threshold=threshold,
        at_threshold=abstention_at(top_answerable, top_unanswerable, threshold) if threshold is not None else None,
        sweep=sweep,
        suggested=suggested,
    )


# ---------------------------------------------------------------------------------------------
# Paired comparison


@dataclass(frozen=True)
class MetricComparison:
    """B against A on one metric over the shared questions: difference = B - A."""

    metric: str
    n: int
    mean_a: float
    mean_b: float
    mean_difference: float
    ci95: tuple[float, float]
    wins: int
    ties: int
    losses: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "mean_a": _finite_or_none(self.mean_a), "mean_b": _finite_or_none(self.mean_b),
                "mean_difference": _finite_or_none(self.mean_difference),
                "ci95": [_finite_or_none(x) for x in self.ci95], "wins": self.wins, "ties": self.ties,
                "losses": self.losses, "p_value": self.p_value}


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of run B with run A (the baseline) on the same questions."""

    query_ids: tuple[str, ...]
    metrics: Mapping[str, MetricComparison]
    per_query: Mapping[str, Mapping[str, float]]
    only_in_a: tuple[str, ...] = ()
    only_in_b: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": len(self.query_ids),
            "metrics": {m: c.to_dict() for m, c in self.metrics.items()},
            "per_query": {q: dict(d) for q, d in self.per_query.items()},
            "only_in_a": list(self.only_in_a),
            "only_in_b": list(self.only_in_b),
            "settings": dict(self.settings),
        }


def compare(a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]],
            metrics: Iterable[str] | None = None, *, resamples: int = TEST_RESAMPLES,
            ci_resamples: int = CI_RESAMPLES, seed: int = 0) -> Comparison:
    """Compare per-query values `{qid: {metric: value}}` of run B with run A.

    Only questions present in both are paired. Per metric: means, mean difference B - A with a
    bootstrap 95% CI, wins/ties/losses of B (|difference| <= 1e-12 is a tie) and the paired
    randomization test p-value. `metrics` defaults to those present in both, in A's order.
    """
    shared = [q for q in a if q in b]
    if metrics is None:
        first_a = next(iter(a.values()), {})
        first_b = next(iter(b.values()), {})
        metrics = [m for m in first_a if m in first_b]
    metrics = [str(parse_measure(m)) for m in metrics]
    for name in metrics:
        for side, values in (("A", a), ("B", b)):
            lacking = [q for q in shared if name not in values[q]]
            if lacking:
                raise ConfigError(f"run {side} has no {name} for question {lacking[0]!r}",
                                  hint="compare metrics both runs were scored with (same -k cutoffs).")
    diffs = {name: np.array([b[q][name] - a[q][name] for q in shared], dtype=np.float64) for name in metrics}
    results = {}
    for name in metrics:
        d = diffs[name]
        mean_a = float(np.mean([a[q][name] for q in shared])) if shared else float("nan")
        mean_b = float(np.mean([b[q][name] for q in shared])) if shared else float("nan")
        lo, hi = bootstrap_ci(d[None, :], resamples=ci_resamples, seed=seed)[0]
        results[name] = MetricComparison(
            metric=name, n=len(shared), mean_a=mean_a, mean_b=mean_b,
            mean_difference=float(d.mean()) if len(d) else float("nan"), ci95=(float(lo), float(hi)),
            wins=int((d > 1e-12).sum()), ties=int((np.abs(d) <= 1e-12).sum()), losses=int((d < -1e-12).sum()),
            p_value=paired_randomization_test(d, resamples=resamples, seed=seed),
        )
    per_query = {q: _frozen({name: float(diffs[name][i]) for name in metrics}) for i, q in enumerate(shared)}
    return Comparison(
        query_ids=tuple(shared),
        metrics=_frozen(results),
        per_query=_frozen(per_query),
        only_in_a=tuple(q for q in a if q not in b),
        only_in_b=tuple(q for q in b if q not in a),
        settings=_frozen({"resamples": resamples, "ci_resamples": ci_resamples, "seed": seed,
                          "test": "paired randomization (sign flip), two-sided"}),
    )


def compare_reports(a: EvalReport, b: EvalReport, metrics: Iterable[str] | None = None, **options: Any) -> Comparison:
    """`compare` over the scored questions of two reports on the same golden set."""
    if metrics is None:
        metrics = [m for m in a.measures if m in b.measures]
    per_a = {r.query_id: r.metrics for r in a.scored()}
    per_b = {r.query_id: r.metrics for r in b.scored()}
    return compare(per_a, per_b, metrics, **options)


# ---------------------------------------------------------------------------------------------
# Saved reports (the `--json` output of `labeler score` / `labeler eval`)


def parse_report_json(text: str, *, source: str | None = None) -> EvalReport:
    """Parse a saved report; raises InputError naming the file when it is not one."""
    hint = "give the output of `labeler score --json` or `labeler eval --json` saved to a file."
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", path=source, line=exc.lineno, hint=hint) from exc
    if not isinstance(data, dict) or not isinstance(data.get("per_query"), dict) or not isinstance(data.get("metrics"), dict):
        raise InputError("not a saved evaluation report (no \"metrics\" and \"per_query\")", path=source, hint=hint)
    try:
        return EvalReport.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"malformed evaluation report ({exc!r})", path=source, hint=hint) from exc


def read_report(path: str | Path) -> EvalReport:
    """Read a saved report from a file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read report: {exc}", path=path, hint="check the path.") from exc
    return parse_report_json(text, source=str(path))
