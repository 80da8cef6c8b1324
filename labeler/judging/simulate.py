"""The judging simulator: a strategy asks for documents one at a time, an oracle grades each from
the collection's full qrels, and nothing else reaches the strategy.

`pool` is the Label page's order today (the app's own pool, dense top 10 + BM25 top 10, in the
order the page shows it); `active` is `ActiveOrder` over the whole corpus with the stopping rule
of `labeler.judging.stopping`. They are pure core, for the Label page to use as they are (not wired in yet).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from labeler.judging.active import ActiveOrder
from labeler.judging.gain_curve import CurveEstimate, confirmed, curve_remaining, is_check
from labeler.judging.stopping import RemainingEstimate, StoppingRule, draw_sample, estimate_remaining

STRATEGIES = ("pool", "active")


class Oracle:
    """Grades a document from one question's qrels when asked (unjudged in the qrels: grade 0) and
    remembers what it was asked, so a strategy's knowledge is exactly `asked`."""

    def __init__(self, qrels: Mapping[str, int]) -> None:
        self._qrels = qrels
        self.asked: dict[str, int] = {}

    def grade(self, doc_id: str) -> int:
        """The grade of `doc_id` (asking twice is a bug in the strategy)."""
        if doc_id in self.asked:
            raise ValueError(f"{doc_id!r} was judged already")
        self.asked[doc_id] = grade = int(self._qrels.get(doc_id, 0))
        return grade


@dataclass
class QuestionRun:
    """What a strategy judged for one question, in order, and where it stopped."""

    judged: list[str] = field(default_factory=list)
    stopped_at: int | None = None
    sample: list[str] = field(default_factory=list)
    estimate: RemainingEstimate | None = None
    estimate_at: int | None = None
    model_estimate: CurveEstimate | None = None  # the gain curve's bound, made last at `model_estimate_at`
    model_estimate_at: int | None = None
    model_checks: list[bool] = field(default_factory=list)  # each check's "<= 1 left", in order

    @property
    def model_confirmed(self) -> bool:
        """Whether the gain curve claims "<= 1 left": its last `CONFIRMATIONS` checks said so."""
        return confirmed(self.model_checks)

    def to_dict(self) -> dict:
        """The `questions` entry of the simulator's JSON."""
        out: dict = {"judged": self.judged, "stopped_at": self.stopped_at}
        if self.estimate is not None:
            out.update(sample=self.sample, estimate_at=self.estimate_at, estimate=self.estimate.to_dict())
        if self.model_estimate is not None:
            out.update(model_estimate_at=self.model_estimate_at, model_estimate=self.model_estimate.to_dict(),
                       model_checks=self.model_checks, model_confirmed=self.model_confirmed)
        return out


def run_pool(order: Sequence[str], oracle: Oracle, budget: int | None = None) -> QuestionRun:
    """Judge the pool in its order, all of it (or the first `budget`)."""
    run = QuestionRun()
    for doc_id in order[:budget]:
        oracle.grade(doc_id)
        run.judged.append(doc_id)
    return run


def run_active(model: ActiveOrder, oracle: Oracle, budget: int, *, rule: StoppingRule | None = None,
               seed: str = "", min_grade: int = 1) -> QuestionRun:
    """Judge what `model` ranks first, refitted after every grade, until `budget` judgments or the rule stops.

    At the rule's first knee a random sample of the unjudged remainder is judged (once) and both
    estimates are made: the sample's hypergeometric bound and the judged order's gain curve's
    (`labeler.judging.gain_curve`: the active order's own grades, the sample left out); the curve's is
    made again at every later knee (`patience` judgments after the last one and after the last
    relevant). Judging stops when the sample's bound says at most one relevant document is left, or the
    curve's has said so at `CONFIRMATIONS` checks in a row (`labeler.judging.gain_curve`).
    """
    run = QuestionRun()
    flags: list[bool] = []
    ranked: list[bool] = []  # the active order's grades alone, in judging order (no sample)
    while len(run.judged) < budget:
        if rule is not None and rule.sample_size and is_check(flags, run.model_estimate_at, rule):
            if run.estimate is None:
                unjudged = [d for d in model.features.doc_ids if d not in oracle.asked]
                size = min(rule.sample_size, budget - len(run.judged))
                run.sample = draw_sample(unjudged, size, seed=f"{seed}\x1fsample")
                grades = [oracle.grade(d) for d in run.sample]
                run.judged.extend(run.sample)
                flags.extend(g >= min_grade for g in grades)
                run.estimate = estimate_remaining(len(unjudged), grades, min_grade=min_grade,
                                                  confidence=rule.confidence)
                run.estimate_at = len(run.judged)
            run.model_estimate = curve_remaining(ranked, len(model.features.doc_ids) - len(oracle.asked),
                                                 sample_relevant=run.estimate.sample_relevant,
                                                 confidence=rule.confidence)
            run.model_estimate_at = len(run.judged)
            run.model_checks.append(run.model_estimate.done)
            if run.estimate.done or run.model_confirmed:
                run.stopped_at = len(run.judged)
                break
            continue
        doc_id = model.next(oracle.asked)
        if doc_id is None:
            break
        flags.append(oracle.grade(doc_id) >= min_grade)
        ranked.append(flags[-1])
        run.judged.append(doc_id)
    return run


def simulate(questions: Sequence[str], strategy: Callable[[str, Oracle], QuestionRun],
             qrels: Mapping[str, Mapping[str, int]]) -> dict[str, QuestionRun]:
    """Run `strategy(query_id, oracle)` for each question with an oracle over that question's qrels only."""
    return {qid: strategy(qid, Oracle(qrels.get(qid, {}))) for qid in questions}
