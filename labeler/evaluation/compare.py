"""Paired comparison of two runs on the same golden set: per metric, the mean difference B - A
with a bootstrap 95% CI, wins/ties/losses, and a paired randomization test p-value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

import numpy as np

from labeler.errors import ConfigError
from labeler.evaluation.report import EvalReport, finite_or_none, frozen
from labeler.evaluation.uncertainty import CI_RESAMPLES, TEST_RESAMPLES, bootstrap_ci, paired_randomization_test
from labeler.metrics import parse_measure


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
        return {"n": self.n, "mean_a": finite_or_none(self.mean_a), "mean_b": finite_or_none(self.mean_b),
                "mean_difference": finite_or_none(self.mean_difference),
                "ci95": [finite_or_none(x) for x in self.ci95], "wins": self.wins, "ties": self.ties,
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
            "per_query": {q: {m: finite_or_none(v) for m, v in d.items()} for q, d in self.per_query.items()},
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
                                  hint="compare metrics both runs were scored with (same --cutoffs; other metrics "
                                       "with `labeler score -m METRIC`).")
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
    per_query = {q: frozen({name: float(diffs[name][i]) for name in metrics}) for i, q in enumerate(shared)}
    return Comparison(
        query_ids=tuple(shared),
        metrics=frozen(results),
        per_query=frozen(per_query),
        only_in_a=tuple(q for q in a if q not in b),
        only_in_b=tuple(q for q in b if q not in a),
        settings=frozen({"resamples": resamples, "ci_resamples": ci_resamples, "seed": seed,
                          "test": "paired randomization (sign flip), two-sided"}),
    )


def compare_reports(a: EvalReport, b: EvalReport, metrics: Iterable[str] | None = None, **options: Any) -> Comparison:
    """`compare` over the scored questions of two reports on the same golden set."""
    if metrics is None:
        metrics = [m for m in a.measures if m in b.measures]
    per_a = {r.query_id: r.metrics for r in a.scored()}
    per_b = {r.query_id: r.metrics for r in b.scored()}
    return compare(per_a, per_b, metrics, **options)


