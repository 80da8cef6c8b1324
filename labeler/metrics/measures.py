"""Named measures (`ndcg@10`, `mrr`, ...): parse them, and compute them over a JudgedRankings."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from labeler.errors import ConfigError
from labeler.metrics.average_precision import average_precision
from labeler.metrics.hit import hit
from labeler.metrics.judged import judged
from labeler.metrics.ndcg import ndcg
from labeler.metrics.ndcg_condensed import ndcg_condensed
from labeler.metrics.precision import precision
from labeler.metrics.r_precision import r_precision
from labeler.metrics.rankings import JudgedRankings
from labeler.metrics.recall import recall
from labeler.metrics.reciprocal_rank import reciprocal_rank

CUT_REQUIRED, CUT_OPTIONAL, UNCUT = "required", "optional", "none"

# name -> (per-query function, cutoff rule, pytrec_eval measure family or None when trec_eval has none)
_REGISTRY: dict[str, tuple[Callable[..., np.ndarray], str, str | None]] = {
    "recall": (recall, CUT_REQUIRED, "recall"),
    "precision": (precision, CUT_REQUIRED, "P"),
    "mrr": (reciprocal_rank, CUT_OPTIONAL, "recip_rank"),
    "ndcg": (ndcg, CUT_REQUIRED, "ndcg_cut"),
    "hit": (hit, CUT_REQUIRED, "success"),
    "map": (average_precision, CUT_OPTIONAL, "map_cut"),
    "r_precision": (r_precision, UNCUT, "Rprec"),
    "judged": (judged, CUT_OPTIONAL, None),             # ir_measures Judged@k
    "ndcg_condensed": (ndcg_condensed, CUT_REQUIRED, None),  # trec_eval -J ndcg_cut.k
}
COVERAGE = "judged"  # the measure reported beside every cut metric, at the same k
_NO_TREC = {
    "judged": "ir_measures' Judged@k is its reference",
    "ndcg_condensed": "it is ndcg_cut_k under trec_eval -J (pytrec_eval judged_docs_only_flag=1)",
}
_ALIASES = {
    "recall": "recall", "r": "recall",
    "precision": "precision", "p": "precision",
    "mrr": "mrr", "rr": "mrr", "recip_rank": "mrr",
    "ndcg": "ndcg", "ndcg_cut": "ndcg", "ndcg_cut.": "ndcg",
    "hit": "hit", "success": "hit", "hits": "hit",
    "map": "map", "ap": "map", "map_cut": "map",
    "r_precision": "r_precision", "rprec": "r_precision", "r-precision": "r_precision",
    "judged": "judged",
    "ndcg_condensed": "ndcg_condensed", "condensed_ndcg": "ndcg_condensed", "ndcg_judged": "ndcg_condensed",
    "ndcg_judged_only": "ndcg_condensed",
}
_PATTERN = re.compile(r"^\s*([a-z_\-]+?)(?:[@._](\d+))?\s*$", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class Measure:
    """One measure at one cutoff, e.g. Measure("ndcg", 10) == nDCG@10; str() gives "ndcg@10"."""

    name: str
    cutoff: int | None = None

    def __post_init__(self) -> None:
        if self.name not in _REGISTRY:
            raise ValueError(f"unknown measure {self.name!r}; known: {', '.join(_REGISTRY)}")
        rule = _REGISTRY[self.name][1]
        if self.cutoff is None and rule == CUT_REQUIRED:
            raise ValueError(f"{self.name} needs a cutoff, e.g. {self.name}@10")
        if self.cutoff is not None:
            if rule == UNCUT:
                raise ValueError(f"{self.name} takes no cutoff")
            if isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int) or self.cutoff < 1:
                raise ValueError(f"cutoff must be a positive integer, got {self.cutoff!r}")

    def __str__(self) -> str:
        return self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"

    def __matmul__(self, k: int) -> "Measure":
        return Measure(self.name, k)

    def compute(self, rankings: JudgedRankings) -> np.ndarray:
        """Per-query values, one per row of `rankings`."""
        function = _REGISTRY[self.name][0]
        return function(rankings) if self.cutoff is None else function(rankings, self.cutoff)

    @property
    def trec_name(self) -> str:
        """The pytrec_eval result key of the same measure (e.g. "ndcg_cut_10", "recip_rank")."""
        family = _REGISTRY[self.name][2]
        if family is None:
            raise ValueError(f"trec_eval has no plain {self.name} measure: {_NO_TREC[self.name]}")
        if self.cutoff is None:
            return {"map_cut": "map"}.get(family, family)
        if self.name == "mrr":
            raise ValueError("trec_eval has no cut reciprocal rank; use recip_rank on a run cut at k")
        return f"{family}_{self.cutoff}"


@dataclass(frozen=True)
class _Family:
    """A measure that needs a cutoff: `Recall@10`."""

    name: str

    def __matmul__(self, k: int) -> Measure:
        return Measure(self.name, k)


Recall, Precision, nDCG, Hit = _Family("recall"), _Family("precision"), _Family("ndcg"), _Family("hit")
nDCGCondensed = _Family("ndcg_condensed")
P = Precision
MRR, MAP, RPrec, Judged = Measure("mrr"), Measure("map"), Measure("r_precision"), Measure("judged")
RR = MRR


def parse_measure(text: str | Measure) -> Measure:
    """"ndcg@10", "nDCG@10", "P@5", "recall_100", "mrr", "recip_rank", "map@10" -> Measure."""
    if isinstance(text, Measure):
        return text
    match = _PATTERN.match(str(text))
    name = _ALIASES.get(match.group(1).lower()) if match else None
    if name is None:
        raise ConfigError(f"unknown metric {text!r}",
                          hint="use recall@k, precision@k, mrr@k, ndcg@k, hit@k, map@k, judged@k, "
                               "ndcg_condensed@k, or mrr, map, r_precision, judged.")
    cutoff = int(match.group(2)) if match.group(2) else None
    try:
        return Measure(name, cutoff)
    except ValueError as exc:
        raise ConfigError(f"bad metric {text!r}: {exc}",
                          hint="write cut measures as name@k with k >= 1, e.g. ndcg@10.") from exc


def parse_measures(items: Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse several measures, dropping repeats but keeping the order given."""
    return tuple(dict.fromkeys(parse_measure(item) for item in items))


DEFAULT_CUTOFFS = (1, 3, 5, 10, 100)  # THE default metric cutoffs, for the CLI, the app and evaluate()


def coverage_measure(measure: str | Measure) -> Measure | None:
    """judged@k for a metric cut at k (judged@k itself for judged@k); None for an uncut metric."""
    cutoff = parse_measure(measure).cutoff
    return None if cutoff is None else Measure(COVERAGE, cutoff)


def with_coverage(measures: Iterable[str | Measure]) -> tuple[Measure, ...]:
    """The measures, then judged@k for every cutoff k among them that lacks it (in cutoff order)."""
    given = parse_measures(measures)
    ks = sorted({m.cutoff for m in given if m.cutoff is not None})
    return given + tuple(m for m in (Measure(COVERAGE, k) for k in ks) if m not in given)


def standard_measures(cutoffs: Iterable[int] = DEFAULT_CUTOFFS) -> tuple[Measure, ...]:
    """recall, precision, mrr, ndcg and hit at every cutoff, uncut mrr, map and r_precision, then
    judged@k at every cutoff (the coverage each of those numbers rests on)."""
    ks = sorted(set(cutoffs))
    families = ("recall", "precision", "mrr", "ndcg", "hit")
    return with_coverage(tuple(Measure(name, k) for name in families for k in ks) + (MRR, MAP, RPrec))
