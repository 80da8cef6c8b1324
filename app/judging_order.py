"""The Label page's judging order: most likely relevant first, "Find more" beyond the pool, and the
stopping estimate, over the core's `labeler.judging` (ActiveOrder, the stopping rule).

The model learns from the annotator's own grades on the question only: under blind judging an order
fitted on colleagues' grades would give those grades away.

Cards never jump under the annotator: a card keeps its place once shown, graded or not, up to and
including the card just graded; only the ungraded cards after it are re-ordered, and graded cards
after it keep their places too (`arrange`). A keyboard annotator grades the focused card and the
focus moves to the next slot, which then holds the model's new first choice.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from labeler.candidates import Candidate
from labeler.corpus import Corpus
from labeler.judging import ActiveOrder, QuestionFeatures, RemainingEstimate, StoppingRule, estimate_remaining
from labeler.judging.gain_curve import CONFIRMATIONS, CurveEstimate, check_points, confirmed, curve_checks
from labeler.judging.stopping import draw_sample
from labeler_app.label import RETRIEVER_NAMES, CandidateView, candidate_views
from labeler_storage.records import QuestionStatus

ORDERS = {"active": "Most likely relevant first", "retriever": "Retriever order", "shuffle": "Shuffle"}
DEFAULT_ORDER = "active"
FOUND_BADGE = "found beyond the pool"
SAMPLE_BADGE = "random sample"
MODEL_BADGE = "model"  # shown as `model #2`: the model's rank among the ungraded cards (never under blind judging)
FIND_MORE = 5  # documents the model brings in per "Find more", besides each retriever's next one past its top k
RULE = StoppingRule()
MIN_GRADE = 1
_RANK = re.compile(r" #\d+$")  # a badge that gives a rank away: `dense #3`, `BM25 #1`, `run 4 #2`, `model #1`


def my_grades(status: QuestionStatus, annotator: str) -> dict[str, int]:
    """doc_id -> this annotator's grade on the question."""
    return {j.doc_id: j.grade for j in status.judgments if j.annotator == annotator}


def judging_sequence(status: QuestionStatus, annotator: str) -> list[tuple[str, int]]:
    """This annotator's grades in the order first given (a regrade keeps its place), so the stopping
    rule reads the same sequence on every page and after a restart. Times have second precision:
    grades of the same second go by doc id, never by anything a page shows, such as the pool (which
    changes when the dense index becomes ready)."""
    mine = [j for j in status.judgments if j.annotator == annotator]
    return [(j.doc_id, j.grade) for j in sorted(mine, key=lambda j: (j.created_at, j.doc_id))]


# --------------------------------------------------------------------------- the order of the cards


@dataclass(frozen=True)
class Layout:
    """The order the cards were last shown in, the grades it was laid out for, and the model's rank
    of each card ungraded then."""

    doc_ids: tuple[str, ...]
    grades: Mapping[str, int]
    ranks: Mapping[str, int] = field(default_factory=dict)


def arrange(previous: Layout | None, candidates: Sequence[str], mine: Mapping[str, int],
            rank: Callable[[list[str]], list[str]], *, focus: int = 0, first: Sequence[str] = ()) -> Layout:
    """The cards' order after this rerun (see the module docstring).

    `candidates`: every card to show; `mine`: the annotator's grades; `rank(ungraded)`: those
    documents most likely relevant first (the model); `focus`: the focused card's place in
    `previous`; `first`: ungraded documents placed before the model's choice (the stopping sample,
    in its order). No earlier layout (a new session, a restart): each graded card where `candidates`
    has it (the pool's order, as the annotator's other tabs show it), the ranked rest in the other
    places. An unchanged layout (same grades, same cards) is kept as it is, without asking the model.
    """
    wanted = set(candidates)
    if previous is not None and dict(previous.grades) == dict(mine) and set(previous.doc_ids) == wanted:
        return previous
    ungraded = [d for d in candidates if d not in mine]
    ranked = rank(ungraded) if ungraded else []
    ranks = {d: i for i, d in enumerate(ranked, start=1)}
    front = [d for d in dict.fromkeys(first) if d in wanted and d not in mine]
    if previous is None:  # a new session: graded cards where the pool has them, the model's order in between
        fill_iter = iter(front + [d for d in ranked if d not in front])
        return Layout(tuple(d if d in mine else next(fill_iter) for d in candidates), dict(mine), ranks)
    kept = [d for d in previous.doc_ids if d in wanted]
    changed = [i for i, d in enumerate(kept) if previous.grades.get(d) != mine.get(d)]
    cut = max(changed) + 1 if changed else min(focus + 1, len(kept))
    head = kept[:cut]
    fill = [d for d in front if d not in head]
    fill += [d for d in ranked if d not in head and d not in fill]
    fill_iter = iter(fill)
    tail = [d if d in mine else next(fill_iter) for d in kept[cut:]]
    rest = list(fill_iter) + [d for d in candidates if d in mine and d not in head and d not in tail]
    return Layout(tuple(head + tail + rest), dict(mine), ranks)


def ordered_views(views: Sequence[CandidateView], layout: Layout, *, show_model: bool) -> list[CandidateView]:
    """The views in the layout's order; with `show_model`, each ungraded card carries the model's rank."""
    by_id = {v.doc_id: v for v in views}
    out = [by_id[d] for d in layout.doc_ids if d in by_id]
    if not show_model or not layout.grades:  # before a grade the cards are in the pool's order, not the model's
        return out
    return [replace(v, badges=(*v.badges, f"{MODEL_BADGE} #{layout.ranks[v.doc_id]}"))
            if v.grade is None and v.doc_id in layout.ranks else v for v in out]


def model_order(features: QuestionFeatures, query_id: str, mine: Mapping[str, int]) -> Callable[[list[str]], list[str]]:
    """`rank` for `arrange`: the question's model, fitted on `mine`, ranking the documents it is given.
    Before the annotator's first grade it has nothing of theirs to learn from: the cards keep the
    pool's order (the retrievers' fused ranking), which `rank` is given them in."""
    if not mine:
        return list
    model = ActiveOrder(features, seed=query_id, min_grade=MIN_GRADE)
    return lambda ungraded: model.order(mine, candidates=ungraded)


def without_ranks(views: Sequence[CandidateView]) -> list[CandidateView]:
    """No badge that gives a rank away (a retriever's, a run's, the model's) on a card not graded yet
    (blind judging, shuffle); where a card came from without a rank ("found beyond the pool", "random
    sample", "added") stays."""
    return [v if v.grade is not None else replace(v, badges=tuple(b for b in v.badges if not _RANK.search(b)))
            for v in views]


def extra_views(corpus: Corpus, status: QuestionStatus, annotator: str, extra: Sequence[str],
                shown: Sequence[CandidateView], *, hidden: bool, shuffle: bool = False) -> list[CandidateView]:
    """Cards for the documents brought in beyond the pool (found, sampled) not among `shown`, in that
    order; `hidden` (blind judging): without others' grades. They do not count toward finishing the
    question under blind judging: that stays "every pooled candidate graded"."""
    have = {v.doc_id for v in shown}
    wanted = [d for d in dict.fromkeys(extra) if d not in have]
    views = candidate_views(corpus, [Candidate(d) for d in wanted], status, annotator, shuffle=shuffle)
    return [replace(v, others={}) if hidden else v for v in views if v.doc_id in set(wanted)]


def mark(views: Sequence[CandidateView], found: Mapping[str, Sequence[str]], sample: Sequence[str]) -> list[CandidateView]:
    """Badges of the cards that are not from the pool: `found` (doc_id -> badges it was found with),
    and the stopping sample's."""
    in_sample = set(sample)
    out = []
    for v in views:
        badges = tuple(found[v.doc_id]) if v.doc_id in found and v.badges in ((), ("added",), ("shuffled",)) else v.badges
        if v.doc_id in in_sample:
            badges = (*badges, SAMPLE_BADGE)
        out.append(replace(v, badges=badges) if badges != v.badges else v)
    return out


# --------------------------------------------------------------------------- find more


def find_more(features: QuestionFeatures, query_id: str, mine: Mapping[str, int], shown: Sequence[str],
              n: int = FIND_MORE) -> list[tuple[str, tuple[str, ...]]]:
    """The next documents to judge from the whole corpus, none of them `shown`: the model's `n` most
    likely relevant, then each retriever's best not shown (past its top k); each with its badges."""
    picked = {d: (FOUND_BADGE,) for d in ActiveOrder(features, seed=query_id, min_grade=MIN_GRADE).find_more(mine, shown, n)}
    skip = set(shown) | set(mine)
    for name in sorted(features.scores):
        scores = np.asarray(features.scores[name])
        by_score = np.lexsort((np.arange(len(scores)), -scores))  # ties in corpus order, as the model's
        rank, doc_id = next(((r, features.doc_ids[p]) for r, p in enumerate(by_score.tolist(), start=1)
                             if features.doc_ids[p] not in skip and features.doc_ids[p] not in picked), (0, None))
        if doc_id is not None:
            picked[doc_id] = (FOUND_BADGE, f"{RETRIEVER_NAMES.get(name, name)} #{rank}")
    return list(picked.items())


# --------------------------------------------------------------------------- the stopping estimate


@dataclass(frozen=True)
class Stopping:
    """Where the question stands for one annotator: before the knee, judging the sample, or estimated."""

    judged: int
    streak: int  # grades since the last relevant one (all of them while none is)
    knee_at: int | None = None  # grades given when the knee was reached
    sample: tuple[str, ...] = ()
    sample_judged: int = 0
    estimate: RemainingEstimate | None = None
    found_since: int = 0  # relevant documents found after the knee outside the sample
    rule: StoppingRule = RULE
    # What the gain curve reads (labeler.judging.gain_curve), from the sample judged on: the grades in the order
    # given (relevant or not), which of them are the sample's, and the corpus's size. Its estimates are made
    # when first asked for, and only where a claim is possible, so a golden set's "likely complete" stays cheap.
    flags: tuple[bool, ...] = ()
    in_sample: tuple[bool, ...] = ()
    curve_start: int = 0
    corpus_size: int = 0

    @functools.cached_property
    def _points(self) -> list[int]:
        if self.estimate is None or not self.curve_start:  # no sample judged: no curve
            return []
        return check_points(self.flags, self.curve_start, self.rule)

    @functools.cached_property
    def _checks(self) -> list[tuple[int, CurveEstimate]]:
        if not self._points:
            return []
        return curve_checks(self.flags, self.in_sample, self.curve_start, self.corpus_size, self.rule,
                            sample_relevant=self.estimate.sample_relevant)

    @property
    def curve(self) -> CurveEstimate | None:
        """The gain curve's bound at its last check."""
        return self._checks[-1][1] if self._checks else None

    @property
    def curve_checks(self) -> tuple[bool, ...]:
        """Each of the curve's last checks' "<= 1 left", in order."""
        return tuple(e.done for _, e in self._checks)

    @property
    def found_after_check(self) -> bool:
        """A relevant grade since the curve's last check: its claim waits for new checks."""
        return bool(self._points) and any(self.flags[self._points[-1]:])

    @property
    def curve_claim(self) -> bool:
        """The gain curve says at most one relevant document left (95%): its last checks in a row said so
        and nothing relevant was found since."""
        if len(self._points) < CONFIRMATIONS or self.found_after_check:
            return False  # decided without fitting anything
        return confirmed(self.curve_checks)

    @property
    def left_upper(self) -> int | None:
        """At most this many relevant documents left unjudged (95%), once the sample is judged."""
        return None if self.estimate is None else max(self.estimate.upper - self.found_since, 0)

    @property
    def left_estimate(self) -> float | None:
        return None if self.estimate is None else max(self.estimate.estimate - self.found_since, 0.0)

    @property
    def sample_claim(self) -> bool:
        """The random sample's bound says at most one relevant document left (95%)."""
        return self.left_upper is not None and self.left_upper <= 1

    @property
    def likely_complete(self) -> bool:
        """At most one relevant document left, at 95%: by the sample's bound or the gain curve's claim."""
        return self.sample_claim or self.curve_claim

    def _curve_line(self) -> str:
        """The gain curve's bound beside the sample's, while it does not claim "<= 1 left"."""
        if self.curve is None:
            return ""
        line = f" The gain curve of your judging order: ≤ {self.curve.upper} left ({self.rule.confidence:.0%})"
        streak = 0  # the last checks in a row that said "<= 1 left"
        for said in reversed(() if self.found_after_check else self.curve_checks):
            if not said:
                break
            streak += 1
        if streak:
            line += (f" at {streak} of the {CONFIRMATIONS} checks in a row it needs before it says so "
                     f"(one each {self.rule.patience} judgments without a relevant document)")
        return line + "."

    @property
    def note(self) -> str:
        """What the Label page says about it (markdown, no data in it)."""
        conf = f"{self.rule.confidence:.0%}"
        if self.estimate is not None:
            n = self.left_upper
            docs = f"relevant document{'s' if n != 1 else ''}"
            sample = f"a random sample of {self.estimate.sample_size} of the {self.estimate.unjudged} you had not judged"
            if self.sample_claim:
                return f"**Likely complete**: ≤ {n} {docs} left ({conf}), from a random sample of {self.estimate.sample_size}."
            if self.curve_claim:
                m = self.curve.upper
                return (f"**Likely complete**: ≤ {m} relevant document{'s' if m != 1 else ''} left ({conf}), by the gain "
                        f"curve of your judging order (three checks in a row, {self.rule.patience} judgments apart, "
                        f"found nothing relevant); {sample} bounds them at ≤ {n} ({conf}).")
            return (f"**Not complete yet**: about {self.left_estimate:.1f} relevant documents left unjudged, "
                    f"≤ {n} ({conf}), from {sample}.{self._curve_line()}")
        if self.knee_at is not None:
            if not self.sample:
                return "**Complete**: you have judged every document of the corpus for this question."
            return (f"**Stopping check**: judge the {len(self.sample)} cards marked *{SAMPLE_BADGE}* "
                    f"({self.sample_judged} of {len(self.sample)} judged): they are drawn at random from the documents "
                    f"you have not judged, so their grades bound how many relevant ones are left ({conf}).")
        wait = self.rule.patience * (2 if not self.judged or self.streak == self.judged else 1) - self.streak
        return (f"**Stopping estimate**: after {wait} more grade{'s' if wait != 1 else ''} without a relevant "
                f"document, a random sample of the rest estimates how many relevant ones are left.")


def stopping(status: QuestionStatus, annotator: str, doc_ids: Sequence[str], rule: StoppingRule = RULE) -> Stopping:
    """The stopping estimate for this annotator on this question (method: labeler.judging.stopping).

    The knee is found on the annotator's grades in the order given (`judging_sequence`); the sample is drawn from the documents of the corpus (`doc_ids`) they
    had not judged then, seeded by the question id and that count, so it is the same on every rerun,
    on every page and after a restart, whatever happens on other questions."""
    sequence = judging_sequence(status, annotator)
    flags = [g >= MIN_GRADE for _, g in sequence]
    last = max((i for i, r in enumerate(flags) if r), default=-1)
    streak = len(flags) - 1 - last
    knee_at = next((i for i in range(1, len(flags) + 1) if rule.knee(flags[:i])), None)
    if knee_at is None:
        return Stopping(len(flags), streak, rule=rule)
    before = {d for d, _ in sequence[:knee_at]}
    unjudged = [d for d in doc_ids if d not in before]
    sample = tuple(draw_sample(unjudged, rule.sample_size, seed=f"{status.question.query_id}\x1f{knee_at}"))
    mine = dict(sequence)
    grades = [mine[d] for d in sample if d in mine]
    if len(grades) < len(sample) or not sample:
        return Stopping(len(flags), streak, knee_at, sample, len(grades), rule=rule)
    in_sample = set(sample)
    found_since = sum(g >= MIN_GRADE for d, g in sequence[knee_at:] if d not in in_sample)
    estimate = estimate_remaining(len(unjudged), grades, min_grade=MIN_GRADE, confidence=rule.confidence)
    marks = tuple(d in in_sample for d, _ in sequence)
    start = max(i for i, m in enumerate(marks) if m) + 1  # the sample judged: the curve's first check
    return Stopping(len(flags), streak, knee_at, sample, len(grades), estimate, found_since, rule,
                    tuple(flags), marks, start, len(doc_ids))


# --------------------------------------------------------------------------- over a golden set


def likely_complete(status: QuestionStatus, doc_ids: Sequence[str]) -> bool:
    """Whether some annotator's stopping estimate on the question says at most one relevant document
    is left (95%). Grades imported from a file have no judging order to read a knee from."""
    people = status.annotators  # sorted; grade sources left out
    return any(stopping(status, a, doc_ids).likely_complete for a in people)


def incomplete_judging(statuses: Sequence[QuestionStatus], doc_ids: Sequence[str], query_ids: Sequence[str]) -> int:
    """How many of the questions `query_ids` (those an evaluation scored) rest on judging no stopping
    estimate calls likely complete."""
    wanted = set(query_ids)
    return sum(1 for s in statuses if s.question.query_id in wanted and not likely_complete(s, doc_ids))


def incomplete_note(incomplete: int, scored: int) -> str:
    """The Evaluate page's line about it ("" when every scored question is likely complete)."""
    if not incomplete:
        return ""
    return (f"{incomplete} of {scored} scored question{'s' if scored != 1 else ''} rest on incomplete judging: no "
            "annotator's stopping estimate (Label page) says \"likely complete: ≤ 1 relevant document left (95%)\", so "
            "relevant documents nobody judged may remain, counted as not relevant; the metrics may move once they are found.")


def complete_line(complete: int, questions: int) -> str:
    """The Golden set page's health line about it."""
    return (f"Likely complete: {complete} of {questions} question{'s' if questions != 1 else ''} (an annotator's "
            "stopping estimate on the Label page says ≤ 1 relevant document left, 95%; imported grades never do).")
