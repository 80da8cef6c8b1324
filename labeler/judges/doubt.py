"""Where a person's look is worth most: the pairs a machine judge is least sure of, or disagrees with a
person on (issue 23, item 5; the work queue's "judge's doubts first" order).

Two grades *disagree* when one says relevant (grade >= 1) and the other not, or they are 2 or more apart.

doubt(pair), in [0, 1]:
- a pair a person graded: 1 when some judge's grade disagrees with some person's grade there (people
  should look again: a second judgment, or an adjudication), else 0;
- a pair no person graded: the largest, over the judges that graded it, of that judge's estimated
  chance that people would disagree with the grade it gave, from its record on the pairs people
  graded: P(disagree | machine grade g) = (pairs where it gave g and people's consensus disagrees + 1)
  / (pairs where it gave g + 2) (Laplace's rule: 1/2 with no record); 1 when two judges disagree with
  each other there.

A question's doubt is the sum over its pairs: the expected number of its machine grades a person would
overturn. Pure: plain mappings in, plain mappings out.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

Pair = tuple[str, str]  # (query_id, doc_id)


def disagree(a: int, b: int) -> bool:
    """Relevant (>= 1) against not, or two grades or more apart."""
    return (a >= 1) != (b >= 1) or abs(a - b) >= 2


def disagreement_rates(consensus: Mapping[Pair, int], machine: Mapping[Pair, int]) -> dict[int, float]:
    """Machine grade g -> Laplace-smoothed share of the pairs people graded where it gave g and disagrees."""
    given: dict[int, list[int]] = {g: [0, 0] for g in range(4)}
    for pair, g in machine.items():
        if pair in consensus and g in given:
            given[g][0] += disagree(consensus[pair], g)
            given[g][1] += 1
    return {g: (bad + 1) / (n + 2) for g, (bad, n) in given.items()}


def pair_doubts(people: Mapping[Pair, Sequence[int]], consensus: Mapping[Pair, int],
                machine: Mapping[str, Mapping[Pair, int]]) -> dict[Pair, float]:
    """Every machine-graded pair's doubt (module docstring). `people`: each person's grade per pair;
    `consensus`: people's grade per pair (the golden set's); `machine`: judge -> its grades."""
    rates = {judge: disagreement_rates(consensus, grades) for judge, grades in machine.items()}
    by_pair: dict[Pair, list[tuple[str, int]]] = {}
    for judge, grades in machine.items():
        for pair, g in grades.items():
            by_pair.setdefault(pair, []).append((judge, g))
    out = {}
    for pair, given in by_pair.items():
        grades = [g for _, g in given]
        if people.get(pair):
            out[pair] = float(any(disagree(h, m) for h in people[pair] for m in grades))
        elif any(disagree(a, b) for a in grades for b in grades):
            out[pair] = 1.0
        else:
            out[pair] = max(rates[judge].get(g, 0.5) for judge, g in given)
    return out


def question_doubts(doubts: Mapping[Pair, float]) -> dict[str, float]:
    """query_id -> the sum of its pairs' doubts."""
    out: dict[str, float] = {}
    for (query_id, _), d in doubts.items():
        out[query_id] = out.get(query_id, 0.0) + d
    return out
