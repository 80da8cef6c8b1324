"""The result of scoring a run against a golden set: `EvalReport`, its per-question
`QueryResult`s and their retrieved documents, and the lossless JSON round trip that saved runs and
`--json` outputs use (`EvalReport.from_dict(report.to_dict()) == report`).

Which questions count:
- **scored** ("answerable"): not marked unanswerable and at least one judgment (even grade 0,
  as trec_eval); one missing from the run scores 0 on every metric (trec_eval -c);
- **unanswerable**: scored separately, by abstention;
- **unjudged**: not marked unanswerable and no judgment yet: listed and counted, not scored
  (trec_eval does not know them either).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from labeler.errors import ConfigError
from labeler.evaluation.abstention import Abstention
from labeler.metrics import Measure, coverage_measure, parse_measure

SCORED, UNANSWERABLE, UNJUDGED = "scored", "unanswerable", "unjudged"


def frozen(mapping: Mapping) -> Mapping:
    """A read-only copy: report objects never share mutable state with their inputs."""
    return MappingProxyType(dict(mapping))


def finite_or_none(value: float | None) -> float | None:
    """JSON has no NaN or infinity: they travel as null."""
    return None if value is None or not math.isfinite(value) else value


def _float_or(value: Any, missing: float) -> float:
    return missing if value is None else float(value)


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
            **{m: finite_or_none(v) for m, v in self.metrics.items()},
            "status": self.status,
            "query_type": self.query_type,
            "first_relevant_rank": self.first_relevant_rank,
            "num_relevant": self.num_relevant,
            "in_run": self.in_run,
            "top_score": finite_or_none(self.top_score),
            "top_k": [{"doc_id": d.doc_id, "score": finite_or_none(d.score), "grade": d.grade} for d in self.top_k],
        }

    @classmethod
    def from_dict(cls, query_id: str, data: Mapping[str, Any], measures: Sequence[str]) -> "QueryResult":
        """Inverse of to_dict (a metric saved as null comes back as NaN)."""
        top_score = data.get("top_score")
        return cls(
            query_id=query_id,
            status=data.get("status", SCORED),
            query_type=data.get("query_type", ""),
            metrics=frozen({m: _float_or(data[m], math.nan) for m in measures if m in data}),
            first_relevant_rank=data.get("first_relevant_rank"),
            num_relevant=int(data.get("num_relevant", 0)),
            in_run=bool(data.get("in_run", False)),
            top_score=None if top_score is None else float(top_score),
            top_k=tuple(RankedDoc(d["doc_id"], _float_or(d.get("score"), -math.inf), d.get("grade"))
                        for d in data.get("top_k", ())),
        )


@dataclass(frozen=True)
class EvalReport:
    """Means over the scored (answerable) questions, their 95% CIs, per type, per question, counts,
    abstention, the settings used, and the question texts (so a saved report reads on its own)."""

    measures: tuple[str, ...]
    metrics: Mapping[str, float]
    ci95: Mapping[str, tuple[float, float]]
    per_type: Mapping[str, Mapping[str, float]]
    type_counts: Mapping[str, int]
    per_query: Mapping[str, QueryResult]
    counts: Mapping[str, int]
    abstention: Abstention | None = None
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    questions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def scored(self) -> tuple[QueryResult, ...]:
        """The questions the means are taken over, in golden-set order."""
        return tuple(r for r in self.per_query.values() if r.status == SCORED)

    def worst(self, metric: str | Measure, n: int = 5) -> tuple[QueryResult, ...]:
        """The n scored questions with the lowest value of `metric` (ties by query id)."""
        name = str(parse_measure(metric))
        if name not in self.measures:
            raise ConfigError(f"metric {name} was not computed in this report",
                              hint=f"choose one of {', '.join(self.measures)}.")
        return tuple(sorted(self.scored(), key=lambda r: (r.metrics[name], r.query_id))[:max(n, 0)])

    def coverage(self, metric: str | Measure) -> float | None:
        """Mean judged@k beside a metric cut at k (its coverage); None for an uncut metric or when
        judged@k was not computed."""
        judged = coverage_measure(metric)
        value = None if judged is None else self.metrics.get(str(judged))
        return None if value is None or not math.isfinite(value) else value

    def judged_at(self, k: int) -> Mapping[str, float] | None:
        """judged@k per scored question: as computed, or for a report saved before judged@k existed,
        counted from the saved top documents (exact when k <= settings["top_k"]); else None."""
        name = f"judged@{k}"
        scored = self.scored()
        if scored and all(name in r.metrics for r in scored):
            return frozen({r.query_id: r.metrics[name] for r in scored})
        if not scored or k > int(self.settings.get("top_k", 0) or 0):
            return None
        # The saved top documents carry grade None exactly when unjudged.
        return frozen({r.query_id: (sum(d.grade is not None for d in r.top_k[:k]) / len(r.top_k[:k]))
                       if r.top_k else 0.0 for r in scored})

    def to_dict(self) -> dict[str, Any]:
        """The `--json` shape: metrics, ci95, per_type, per_query, counts, abstention, settings, questions."""
        return {
            "measures": list(self.measures),
            "metrics": {m: finite_or_none(v) for m, v in self.metrics.items()},
            "ci95": {m: [finite_or_none(lo), finite_or_none(hi)] for m, (lo, hi) in self.ci95.items()},
            "per_type": {t: {m: finite_or_none(v) for m, v in values.items()} for t, values in self.per_type.items()},
            "per_type_counts": dict(self.type_counts),
            "per_query": {q: r.to_dict() for q, r in self.per_query.items()},
            "counts": dict(self.counts),
            "abstention": self.abstention.to_dict() if self.abstention else None,
            "settings": dict(self.settings),
            "questions": dict(self.questions),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "EvalReport":
        """Rebuild a report from its `to_dict` (a saved run, or `labeler score --json` output).

        Reports saved before question texts had their own map carried them as a `question` field
        of each per-query entry; those are read too.
        """
        measures = tuple(data.get("measures") or data["metrics"].keys())
        nan = math.nan
        questions = dict(data.get("questions") or {})
        for query_id, entry in data["per_query"].items():
            if isinstance(entry, Mapping) and "question" in entry:
                questions.setdefault(query_id, entry["question"])
        abstention = data.get("abstention")
        return cls(
            measures=measures,
            metrics=frozen({m: _float_or(v, nan) for m, v in data["metrics"].items()}),
            ci95=frozen({m: tuple(_float_or(x, nan) for x in v) for m, v in data.get("ci95", {}).items()}),
            per_type=frozen({t: frozen({m: _float_or(x, nan) for m, x in v.items()})
                             for t, v in data.get("per_type", {}).items()}),
            type_counts=frozen(data.get("per_type_counts", {})),
            per_query=frozen({q: QueryResult.from_dict(q, v, measures) for q, v in data["per_query"].items()}),
            counts=frozen(data.get("counts", {})),
            abstention=None if abstention is None else Abstention.from_dict(abstention),
            settings=frozen(data.get("settings", {})),
            questions=frozen(questions),
        )
