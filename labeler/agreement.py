"""Several annotators: the consensus grade, disagreements, and inter-annotator agreement.

Ratings have one plain shape: `(query_id, doc_id) -> {annotator: grade}`.

Consensus rule: the median of the annotators' grades, rounded down
(`floor(median)`; grades 1 and 2 give 1, grades 0 and 3 give 1, grades 0, 2, 3 give 2).
Rounded down because a golden set that claims less relevance than the annotators saw costs
a little recall, while one that claims more rewards retrieving documents some annotator
rejected. With one annotator the consensus is that annotator's grade.

Agreement: Cohen's kappa for each pair of annotators (over the items both judged),
Fleiss' kappa over the items every annotator judged, and Krippendorff's alpha over all items
with two or more grades (it allows missing grades). A statistic is None when it is undefined
(no shared items, or every grade is the same so chance agreement is 1).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

Ratings = Mapping[tuple[str, str], Mapping[str, int]]
LEVELS = ("nominal", "ordinal", "interval")


def consensus_grade(grades: Iterable[int]) -> int:
    """floor(median(grades)); with an even count, floor of the mean of the two middle grades."""
    ordered = sorted(grades)
    if not ordered:
        raise ValueError("consensus of no grades")
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) // 2  # floor division rounds down, also for negatives


@dataclass(frozen=True)
class Disagreement:
    """Annotators who gave one (question, document) different grades."""

    query_id: str
    doc_id: str
    grades: Mapping[str, int]  # annotator -> grade
    consensus: int

    @property
    def splits_relevance(self) -> bool:
        """True when some annotator found the document relevant (>= 1) and another did not."""
        return any(g >= 1 for g in self.grades.values()) and any(g < 1 for g in self.grades.values())

    @property
    def spread(self) -> int:
        """Highest grade minus lowest grade."""
        return max(self.grades.values()) - min(self.grades.values())


@dataclass(frozen=True)
class Consensus:
    """Consensus qrels plus every (question, document) the annotators disagree on."""

    qrels: Mapping[str, Mapping[str, int]]
    disagreements: tuple[Disagreement, ...]


def counted(by_annotator: Mapping[str, int], stand_in: str | Callable[[str], bool] | None = None,
            apart: Container[str] = ()) -> Mapping[str, int]:
    """The grades of one document a consensus counts: never those of an annotator `apart` (an
    imported file's grades kept out of the consensus); a stand-in's (an imported file's grades:
    one name, or a test on the name) only where no one else graded the document, so it never
    shifts the grades people gave."""
    kept = {a: g for a, g in by_annotator.items() if a not in apart} if apart else by_annotator
    if stand_in is None:
        return kept
    is_stand_in = stand_in.__eq__ if isinstance(stand_in, str) else stand_in
    people = {a: g for a, g in kept.items() if not is_stand_in(a)}
    return people or kept


def consensus(ratings: Ratings, *, stand_in: str | Callable[[str], bool] | None = None,
              apart: Container[str] = ()) -> Consensus:
    """Consensus grade per (question, document) and the disagreements, worst (largest spread) first.
    `stand_in`, `apart`: grades counted only where no one else graded, or never (see `counted`)."""
    qrels: dict[str, dict[str, int]] = {}
    disagreements = []
    for (query_id, doc_id), by_annotator in ratings.items():
        by_annotator = counted(by_annotator, stand_in, apart)
        if not by_annotator:
            continue
        grade = consensus_grade(by_annotator.values())
        qrels.setdefault(query_id, {})[doc_id] = grade
        if len(set(by_annotator.values())) > 1:
            disagreements.append(Disagreement(query_id, doc_id, dict(sorted(by_annotator.items())), grade))
    disagreements.sort(key=lambda d: (-d.spread, not d.splits_relevance, d.query_id, d.doc_id))
    return Consensus(qrels, tuple(disagreements))


def unanswerable_consensus(voters: Iterable[str], ratings: Mapping[str, Mapping[str, int]], *,
                           stand_in: str | Callable[[str], bool] | None = None, apart: Container[str] = ()) -> bool:
    """A question is unanswerable when someone votes so and no document's consensus grade is >= 1.

    `ratings`: doc_id -> {annotator: grade} for the question. A vote never outweighs a grade, so
    the consensus grades (what an export carries) and the flag never contradict each other. A
    voter or grade `apart` does not count.
    """
    return any(v not in apart for v in voters) and all(consensus_grade(c.values()) < 1 for g in ratings.values()
                                                       if (c := counted(g, stand_in, apart)))


def unanswerable_disagreement(voters: Iterable[str], ratings: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """annotator -> "unanswerable" or "answerable" when they disagree: some vote unanswerable while
    others (who do not vote so) grade a document >= 1; {} when they agree."""
    said = set(voters)
    found = sorted({a for g in ratings.values() for a, grade in g.items() if grade >= 1 and a not in said})
    if not said or not found:
        return {}
    return {**{a: "unanswerable" for a in sorted(said)}, **{a: "answerable" for a in found}}


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa for two annotators' grades of the same items (unweighted).

    kappa = (p_o - p_e) / (1 - p_e), p_o = share of items with equal grades,
    p_e = sum over grades c of P_a(c) * P_b(c). None when there are no items or p_e = 1
    (both annotators gave one and the same grade to everything).
    """
    if len(a) != len(b):
        raise ValueError("cohen_kappa needs two equally long sequences")
    n = len(a)
    if n == 0:
        return None
    p_o = sum(1 for x, y in zip(a, b) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in ca) / (n * n)
    if math.isclose(p_e, 1.0):
        return None
    return (p_o - p_e) / (1 - p_e)


def fleiss_kappa(items: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa; every item carries the grades of the same number m >= 2 of raters.

    P_i = (sum_c n_ic^2 - m) / (m (m - 1)); P_bar = mean P_i; p_c = sum_i n_ic / (N m);
    P_e = sum_c p_c^2; kappa = (P_bar - P_e) / (1 - P_e). None when there are no items or P_e = 1.
    """
    if not items:
        return None
    m = len(items[0])
    if m < 2 or any(len(item) != m for item in items):
        raise ValueError("fleiss_kappa needs the same number (>= 2) of grades for every item")
    totals: Counter[int] = Counter()
    p_bar = 0.0
    for item in items:
        counts = Counter(item)
        totals.update(counts)
        p_bar += (sum(c * c for c in counts.values()) - m) / (m * (m - 1))
    p_bar /= len(items)
    p_e = sum((c / (len(items) * m)) ** 2 for c in totals.values())
    if math.isclose(p_e, 1.0):
        return None
    return (p_bar - p_e) / (1 - p_e)


def krippendorff_alpha(units: Iterable[Sequence[int]], level: str = "ordinal") -> float | None:
    """Krippendorff's alpha over units, each the grades it received (missing grades omitted).

    Coincidences: each unit with m_u >= 2 grades adds 1/(m_u - 1) to o[c][k] for every ordered
    pair of grades from different annotators. n_c = sum_k o[c][k], n = sum_c n_c.
    alpha = 1 - (n - 1) * sum o[c][k] d2(c, k) / sum n_c n_k d2(c, k), with d2 nominal
    (0 if equal else 1), interval ((c - k)^2) or ordinal ((sum of n_g for g from c to k
    - (n_c + n_k) / 2)^2). Units with fewer than two grades are ignored. None when fewer than
    two grades are pairable or only one value occurs (no expected disagreement).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}")
    o: Counter[tuple[int, int]] = Counter()
    for unit in units:
        m = len(unit)
        if m < 2:
            continue
        for i, c in enumerate(unit):
            for j, k in enumerate(unit):
                if i != j:
                    o[c, k] += 1 / (m - 1)
    n_c: Counter[int] = Counter()
    for (c, _k), w in o.items():
        n_c[c] += w
    n = sum(n_c.values())
    values = sorted(n_c)
    if n < 2 or len(values) < 2:
        return None

    def d2(c: int, k: int) -> float:
        if level == "nominal":
            return 0.0 if c == k else 1.0
        if level == "interval":
            return float((c - k) ** 2)
        lo, hi = min(c, k), max(c, k)
        return (sum(n_c[g] for g in values if lo <= g <= hi) - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(w * d2(c, k) for (c, k), w in o.items())
    expected = sum(n_c[c] * n_c[k] * d2(c, k) for c in values for k in values)
    if expected == 0:
        return None
    return 1 - (n - 1) * observed / expected


@dataclass(frozen=True)
class PairAgreement:
    """Cohen's kappa of two annotators over the items both judged."""

    annotator_a: str
    annotator_b: str
    n_items: int
    kappa: float | None


@dataclass(frozen=True)
class AgreementReport:
    """How far the annotators agree on grades, by several standard statistics."""

    annotators: tuple[str, ...]
    n_items: int  # (question, document) pairs with two or more grades
    pairs: tuple[PairAgreement, ...]
    fleiss_kappa: float | None  # over the items every annotator judged (needs >= 2 annotators)
    n_items_all: int  # how many items that is
    krippendorff_alpha: float | None  # ordinal, over all items with two or more grades


def agreement(ratings: Ratings, *, exclude: Iterable[str] = ()) -> AgreementReport:
    """Cohen's kappa per pair, Fleiss' kappa and Krippendorff's alpha for the ratings.

    `exclude` names pseudo-annotators (e.g. an imported consensus) that are not people.
    """
    skip = set(exclude)
    cleaned = [{a: g for a, g in by.items() if a not in skip} for by in ratings.values()]
    annotators = tuple(sorted({a for by in cleaned for a in by}))
    pairs = []
    for a, b in combinations(annotators, 2):
        shared = [(by[a], by[b]) for by in cleaned if a in by and b in by]
        pairs.append(PairAgreement(a, b, len(shared), cohen_kappa([x for x, _ in shared], [y for _, y in shared])))
    full = [[by[a] for a in annotators] for by in cleaned if len(annotators) >= 2 and len(by) == len(annotators)]
    multi = [list(by.values()) for by in cleaned if len(by) >= 2]
    return AgreementReport(
        annotators=annotators,
        n_items=len(multi),
        pairs=tuple(pairs),
        fleiss_kappa=fleiss_kappa(full) if full else None,
        n_items_all=len(full),
        krippendorff_alpha=krippendorff_alpha(multi, "ordinal"),
    )


__all__ = [
    "AgreementReport", "Consensus", "Disagreement", "PairAgreement", "Ratings", "agreement",
    "cohen_kappa", "consensus", "consensus_grade", "fleiss_kappa", "krippendorff_alpha",
]
