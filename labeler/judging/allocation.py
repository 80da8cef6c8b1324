"""Where the next judgments go: spread over the questions by what judging each one still finds.

Judging every question to the same depth spends as much on a question whose relevant documents are all
found as on one that still turns up a relevant document every other judgment. Here every question first
gets its first `floor` judgments (in its own active order), then each next visit of `visit` judgments goes
to the question whose last visit found the most relevant documents (the share smoothed as (relevant + 1)
/ (visit + 2); ties: the question met first). Only grades already given are read, as in the active order.

It answers "the same number of judgments as the whole pool, how many relevant documents?" for a whole
golden set rather than question by question; `labeler simulate --allocate` measures it, and README's
"Judging order" gives the figures (bench/bench_judging_cost.py).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from labeler.judging.active import ActiveOrder
from labeler.judging.simulate import Oracle, QuestionRun

FLOOR = 10  # judgments every question gets before any visit goes by yield
VISIT = 10  # judgments a visit spends on one question (and the window its yield is read over)


def tally(flags: Sequence[bool], visit: int = VISIT) -> tuple[int, int]:
    """(judgments, relevant among the last `visit`) of a question's grades in judging order (True: relevant)."""
    return len(flags), sum(flags[-visit:])


def visit_yield(judged: int, found_last: int, floor: int = FLOOR, visit: int = VISIT) -> float:
    """A question's claim on the next visit, from its `judged` grades so far and the relevant ones among
    its last `visit` (`found_last`): above 1 while it has had fewer than `floor` judgments (the fewer, the
    higher), else the smoothed share (found_last + 1) / (visit + 2)."""
    if judged < floor:
        return 2.0 - judged / floor
    return (found_last + 1) / (min(judged, visit) + 2)


def run_allocated(models: Mapping[str, ActiveOrder], oracles: Mapping[str, Oracle], total: int, *,
                  budget: int, floor: int = FLOOR, visit: int = VISIT, min_grade: int = 1) -> dict[str, QuestionRun]:
    """Judge `total` documents over the questions of `models` (query_id -> its active order; `oracles`
    the same questions' graders), at most `budget` per question, each visit to the question with the
    highest `visit_yield`."""
    runs = {q: QuestionRun() for q in models}
    flags: dict[str, list[bool]] = {q: [] for q in models}
    open_ = dict.fromkeys(models)  # questions with documents left to judge and room in their budget
    spent = 0
    while spent < total and open_:
        qid = max(open_, key=lambda q: visit_yield(*tally(flags[q], visit), floor, visit))
        steps = floor - len(flags[qid]) if len(flags[qid]) < floor else visit
        exhausted = False
        for _ in range(min(steps, total - spent, budget - len(runs[qid].judged))):
            doc_id = models[qid].next(oracles[qid].asked)
            if doc_id is None:
                exhausted = True
                break
            flags[qid].append(oracles[qid].grade(doc_id) >= min_grade)
            runs[qid].judged.append(doc_id)
            spent += 1
        if exhausted or len(runs[qid].judged) >= budget:
            open_.pop(qid)
    return runs
