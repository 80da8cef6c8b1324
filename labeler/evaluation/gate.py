"""A noise-aware CI gate on two saved reports (BASE, the baseline, and NEW): fail when NEW's mean of
one metric is lower AND the paired randomization test says the drop is not noise (p < alpha), when
the judged@k the metric rests on is below a floor (its number cannot be trusted), or when NEW leaves
out questions BASE scores (its system failed on them, or its report is cut short): a mean over fewer
questions vouches for none of the rest. Questions judged differently in the two reports (the golden
set changed between them) are named in a note: the difference then mixes system and judgments.

    gate(base, new, "ndcg@10", alpha=0.05, min_judged=0.8) -> Gate

`Gate.lines()` says in one or two plain lines which check decided. The paired test pairs the
questions scored in both reports, with a fixed seed, so a gate run is reproducible.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from labeler.errors import ConfigError, InputError
from labeler.evaluation.compare import MetricComparison, compare
from labeler.evaluation.report import EvalReport, finite_or_none
from labeler.evaluation.uncertainty import TEST_RESAMPLES
from labeler.metrics import coverage_measure, parse_measure

DEFAULT_ALPHA = 0.05
_SAVE_HINT = "save the whole output of `labeler score --json` or `labeler eval --json` (it has per_query)."


@dataclass(frozen=True)
class Gate:
    """The verdict on NEW against BASE for one metric; `passed` is False when `dropped` or `low_judged`."""

    metric: str
    alpha: float
    comparison: MetricComparison
    dropped: bool                      # NEW's mean is lower and p < alpha
    coverage_metric: str | None = None  # "judged@10" for "ndcg@10"
    min_judged: float | None = None
    judged_base: float | None = None    # mean judged@k over the paired questions
    judged_new: float | None = None
    unpaired: int = 0                   # questions scored in only one of the reports
    lost: tuple[str, ...] = ()          # questions BASE scores and NEW does not
    failed_new: Mapping[str, str] = field(default_factory=dict)  # NEW's failed questions: query id -> error
    rejudged: tuple[str, ...] = ()      # questions both score whose text or relevant count differs

    @property
    def low_judged(self) -> tuple[str, ...]:
        """Which of "BASE", "NEW" have judged@k below min_judged."""
        if self.min_judged is None:
            return ()
        return tuple(side for side, v in (("BASE", self.judged_base), ("NEW", self.judged_new))
                     if v is not None and v < self.min_judged)

    @property
    def passed(self) -> bool:
        """True when no check failed: no significant drop, no low coverage, no question left out."""
        return not self.dropped and not self.low_judged and not self.lost

    def lines(self) -> list[str]:
        """One or two plain lines saying which check decided: the metric, then coverage if it failed."""
        c = self.comparison
        change = f"{c.mean_a:.4f} → {c.mean_b:.4f} ({_signed(c.mean_difference)})"
        over = f"over {c.n} questions" + (f" ({self.unpaired} not in both left out)" if self.unpaired else "")
        p = _p_text(c.p_value, self.alpha)
        if self.dropped:
            metric = f"FAIL {self.metric} dropped {change}, paired randomization p={p} < {self.alpha:g} {over}"
        elif c.mean_difference < 0:
            metric = f"{self.metric} {change} is within noise: p={p} ≥ {self.alpha:g} {over}"
        else:
            metric = f"{self.metric} did not drop: {change}, p={p} {over}"
        return self._failures(metric) + self._notes()

    def _failures(self, metric: str) -> list[str]:
        """The metric's line (PASS when nothing failed) with each failed check: the deciding one first."""
        failed = [line for line in (self._lost_line(), self._low_judged_line()) if line]
        if not failed:
            coverage = "" if self.judged_base is None or self.judged_new is None else (
                f"; {self.coverage_metric} {self.judged_base:.2f} → {self.judged_new:.2f}")
            return [metric + coverage if self.dropped else f"PASS {metric}{coverage}"]
        return [metric, *failed] if self.dropped else [*failed, metric]

    def _lost_line(self) -> str:
        if not self.lost:
            return ""
        failed = [q for q in self.lost if q in self.failed_new]
        absent = [q for q in self.lost if q not in self.failed_new]
        parts = ([f"{len(failed)} failed in NEW (first: {failed[0]} — {self.failed_new[failed[0]]})"] if failed else []) + \
                ([f"{len(absent)} not in NEW's report (first: {absent[0]})"] if absent else [])
        return (f"FAIL NEW leaves out {len(self.lost)} of the questions BASE scores: {'; '.join(parts)}; a mean over "
                f"the rest vouches for none of them. Hint: fix what failed, or score NEW on the same golden set.")

    def _low_judged_line(self) -> str:
        if not self.low_judged:
            return ""
        sides = " and ".join(f"{side} {self.judged_base if side == 'BASE' else self.judged_new:.4f}"
                             for side in self.low_judged)
        k = self.coverage_metric.split("@")[1]
        return (f"FAIL {self.coverage_metric} below --min-judged {self.min_judged:g}: {sides}; {self.metric} counts "
                f"unjudged documents as not relevant. Hint: judge the unlabelled documents in the top {k} "
                f"(or lower --min-judged).")

    def _notes(self) -> list[str]:
        if not self.rejudged:
            return []
        n = len(self.rejudged)
        return [f"Note: {n} question{'s were' if n != 1 else ' was'} judged differently for BASE and NEW (first: "
                f"{self.rejudged[0]}): the change mixes the system with the golden set. Hint: score both runs "
                f"against one golden set, e.g. `labeler compare BASE.trec NEW.trec --golden GOLDEN`."]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of the `gate` entry of `labeler compare --json`."""
        return {"metric": self.metric, "passed": self.passed, "dropped": self.dropped, "alpha": self.alpha,
                "mean_base": finite_or_none(self.comparison.mean_a), "mean_new": finite_or_none(self.comparison.mean_b),
                "mean_difference": finite_or_none(self.comparison.mean_difference),
                "p_value": self.comparison.p_value, "questions": self.comparison.n, "unpaired": self.unpaired,
                "coverage_metric": self.coverage_metric, "min_judged": self.min_judged,
                "judged_base": finite_or_none(self.judged_base), "judged_new": finite_or_none(self.judged_new),
                "low_judged": list(self.low_judged), "lost": list(self.lost),
                "failed_in_new": {q: self.failed_new[q] for q in self.lost if q in self.failed_new},
                "judged_differently": list(self.rejudged), "lines": self.lines()}


def _signed(x: float) -> str:
    return f"{'−' if x < 0 else '+'}{abs(x):.4f}"


def _p_text(p: float, alpha: float) -> str:
    """p with the fewest decimals that show its first significant digit (at least 2 decimals) and keep it
    on its own side of alpha: 0.41, 0.0004, and 0.04999 rather than a misleading 0.05."""
    first = -math.floor(math.log10(float(f"{p:.0e}"))) if p > 0 else 2  # 9.999e-05 shows as 0.0001
    for digits in range(max(2, first), 12):
        text = f"{p:.{digits}f}"
        if (float(text) < alpha) == (p < alpha):
            return text
    return repr(p)


def _per_query(report: EvalReport, metric: str, source: str | None) -> dict[str, float]:
    """The metric's value per scored question, or an InputError naming the file and the fix."""
    scored = report.scored()
    missing = [r.query_id for r in scored if metric not in r.metrics]
    if scored and not missing:
        return {r.query_id: r.metrics[metric] for r in scored}
    if metric not in report.metrics:
        raise InputError(f"the report has no {metric}", path=source,
                         hint=f"score both runs with that cutoff, e.g. `labeler score GOLDEN RUN --cutoffs "
                              f"{parse_measure(metric).cutoff or 10} --json`, or gate on a metric it has.")
    what = "no scored question" if not scored else f"no per-question {metric} (first: {missing[0]!r})"
    raise InputError(f"the report has the mean of {metric} but {what}, which the paired test needs",
                     path=source, hint=_SAVE_HINT)


def gate(base: EvalReport, new: EvalReport, metric: str, *, alpha: float = DEFAULT_ALPHA,
         min_judged: float | None = None, base_source: str | None = None, new_source: str | None = None,
         resamples: int = TEST_RESAMPLES, seed: int = 0) -> Gate:
    """Decide whether NEW is worse than BASE on `metric` beyond noise, or rests on too few judgments.

    Raises InputError (naming the file) when a report lacks the per-question values the paired
    test needs, or the judged@k that `min_judged` asks for; ConfigError on a bad alpha or floor.
    """
    name = str(parse_measure(metric))
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha {alpha} is not between 0 and 1", hint="use e.g. --alpha 0.05.")
    if min_judged is not None and not 0.0 <= min_judged <= 1.0:
        raise ConfigError(f"--min-judged {min_judged} is not a share between 0 and 1",
                          hint="use e.g. --min-judged 0.8.")
    judged = coverage_measure(name)
    if min_judged is not None and judged is None:
        raise ConfigError(f"--min-judged needs a metric with a cutoff; {name} has none",
                          hint=f"gate on e.g. {name}@10, whose judged@10 is the coverage it rests on.")
    values_base = _per_query(base, name, base_source)
    values_new = _per_query(new, name, new_source)
    shared = [q for q in values_base if q in values_new]
    if not shared:
        raise InputError("BASE and NEW share no scored question", path=new_source,
                         hint="compare reports made from the same golden set.")
    result = compare({q: {name: v} for q, v in values_base.items()}, {q: {name: v} for q, v in values_new.items()},
                     [name],
                     resamples=resamples, ci_resamples=0, seed=seed).metrics[name]
    judged_means: dict[str, float | None] = {"BASE": None, "NEW": None}
    if judged is not None:
        for side, report, source in (("BASE", base, base_source), ("NEW", new, new_source)):
            per_query = report.judged_at(judged.cutoff)
            if per_query is None:
                if min_judged is not None:
                    raise InputError(f"the report has no {judged}, which --min-judged checks", path=source,
                                     hint=f"score it again with this version of labeler ({_SAVE_HINT})")
                continue
            judged_means[side] = float(np.mean([per_query[q] for q in shared if q in per_query]))
    unpaired = len(set(values_base) ^ set(values_new))
    return Gate(metric=name, alpha=alpha, comparison=result,
                dropped=bool(result.mean_difference < 0 and result.p_value < alpha),
                coverage_metric=None if judged is None else str(judged), min_judged=min_judged,
                judged_base=judged_means["BASE"], judged_new=judged_means["NEW"], unpaired=unpaired,
                lost=tuple(q for q in values_base if q not in values_new),
                failed_new=dict((new.settings or {}).get("failed") or {}), rejudged=_rejudged(base, new, shared))


def _rejudged(base: EvalReport, new: EvalReport, shared: list[str]) -> tuple[str, ...]:
    """Shared questions whose text or number of relevant documents differs between the reports."""
    def differs(q: str) -> bool:
        a, b = base.per_query[q], new.per_query[q]
        text_a, text_b = base.questions.get(q), new.questions.get(q)
        return a.num_relevant != b.num_relevant or (text_a is not None and text_b is not None and text_a != text_b)
    return tuple(q for q in shared if differs(q))

