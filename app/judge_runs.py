"""A machine judge at work on a collection: the use cases `labeler judge`, `labeler calibrate` (a
collection and a saved judge) and the Judges page share, over a store (the Store satisfies
`GradeStore`).

- `hole_pairs`: the pairs to grade, a saved run's holes (labeler_app.holes) with the documents as the
  corpus holds them now (their content hash is the one the grade is recorded against); or
  `judged_pairs`, the pairs people graded, which a calibration needs the judge's grades of;
- `judge_pairs`: grade them and save each grade as it comes, in small transactions, leaving the
  pairs this judge already graded with this prompt and this content: an interrupted run, started
  again, grades only what is left, and no pair is graded twice. A failure is listed, never a 0;
- `collection_calibration`: the judge's calibration on the collection: people's grades (the golden
  set's `relevance`: consensus, adjudications outweighing it) against the judge's current grades
  (its name and prompt; stale ones left out), with the saved runs' top 10 for the taus.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from labeler.corpus import Corpus
from labeler.errors import InputError
from labeler.judges.base import Judge, JudgeFailure, JudgePair, MachineGrade
from labeler.judges.calibration import Calibration, calibrate
from labeler.judges.spec import JudgeSpec
from labeler.progress import Progress
from labeler_app.holes import HOLE_DEPTH, RunStore, find_holes

SAVE_EVERY = 10  # grades per transaction: an interruption loses at most the pairs in flight


class GradeStore(RunStore, Protocol):
    """What these use cases need of a store (storage.Store, or a store bound to a collection): what
    finding holes needs, and the machine grades, golden set and runs."""

    def machine_grades(self, *, judge: str | None = None, prompt_hash: str | None = None,
                       query_id: str | None = None) -> list[Any]: ...
    def save_machine_grades(self, found: Iterable[Any]) -> int: ...
    def export_golden(self) -> Any: ...
    def list_runs(self) -> list[Any]: ...


@dataclass(frozen=True)
class JudgeRun:
    """What grading did: grades saved, pairs left because already graded, failures (listed, never a 0)."""

    judge: str
    asked: int
    saved: int
    skipped: int
    failures: tuple[JudgeFailure, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()  # (query_id, doc_id) the corpus does not hold: not graded

    @property
    def line(self) -> str:
        """`judge umbrela: 12 pairs graded, 3 already graded (left), 1 failed, 0 not in the corpus`."""
        return (f"judge {self.judge}: {self.saved} pairs graded, {self.skipped} already graded (left), "
                f"{len(self.failures)} failed, {len(self.missing)} not in the corpus")


def require_own_run(store: GradeStore, run_id: int) -> Any:
    """The saved run; an InputError when a store bound to a collection is given a run of another."""
    run = store.runs.load(run_id)
    bound = getattr(store, "collection", None)
    if bound is not None and run.collection != bound:
        raise InputError(f"run #{run_id} is a run of collection {run.collection!r}, not of {bound!r}",
                         hint="pick a run of this collection (see its Evaluate page's history).")
    return run


def hole_pairs(store: GradeStore, run_id: int, corpus: Corpus, *, k: int = HOLE_DEPTH,
               limit: int | None = None) -> tuple[list[JudgePair], list[tuple[str, str]]]:
    """The run's holes (its top-k documents nobody judged), in question then rank order, as pairs to
    grade (at most `limit`); and the holes the corpus does not hold (no text to show a judge). A store
    bound to a collection refuses a run of another collection."""
    require_own_run(store, run_id)
    holes = find_holes(store, run_id, k)
    questions = {q.question.query_id: q.question.question for q in store.questions.list()}
    pairs, missing = [], []
    for query_id, docs in holes.by_question.items():
        for doc_id, _rank in docs:
            doc = corpus.get(doc_id)
            if doc is None:
                missing.append((query_id, doc_id))
            else:
                pairs.append(JudgePair.of_document(query_id, questions[query_id], doc))
    return (pairs if limit is None else pairs[:limit]), missing


def judged_pairs(store: GradeStore, corpus: Corpus, *, limit: int | None = None
                 ) -> tuple[list[JudgePair], list[tuple[str, str]]]:
    """The pairs people graded (the golden set's `relevance` on answerable questions), as pairs to grade
    for a calibration (at most `limit`); and those the corpus does not hold."""
    pairs, missing = [], []
    for q in store.golden.export().queries:
        if q.unanswerable:
            continue
        for doc_id in q.relevance:
            doc = corpus.get(doc_id)
            if doc is None:
                missing.append((q.query_id, doc_id))
            else:
                pairs.append(JudgePair.of_document(q.query_id, q.question, doc))
    return (pairs if limit is None else pairs[:limit]), missing


def judge_pairs(store: GradeStore, judge: Judge, spec: JudgeSpec, pairs: Sequence[JudgePair], *,
                progress: Progress | None = None, missing: Sequence[tuple[str, str]] = ()) -> JudgeRun:
    """Grade the pairs this judge (name and prompt) has not graded against this content yet, saving
    the grades as they come (SAVE_EVERY per transaction, the rest when grading stops, even by an error
    or an interrupt)."""
    done = {(g.query_id, g.doc_id, g.doc_hash) for g in store.machine.grades(judge=spec.name,
                                                                              prompt_hash=spec.prompt_hash)}
    todo = [p for p in dict.fromkeys(pairs) if (p.query_id, p.doc_id, p.doc_hash) not in done]
    failures: list[JudgeFailure] = []
    pending: list[MachineGrade] = []
    saved = 0
    try:
        for result in judge.judge(todo, progress):
            if isinstance(result, JudgeFailure):
                failures.append(result)
                continue
            pending.append(result)
            if len(pending) >= SAVE_EVERY:
                saved += store.machine.save_grades(pending)
                pending = []
    finally:
        if pending:
            saved += store.machine.save_grades(pending)
    return JudgeRun(spec.name, len(todo), saved, len(pairs) - len(todo), tuple(failures), tuple(missing))


def run_rankings(store: GradeStore) -> dict[str, dict[str, dict[str, float]]]:
    """The saved runs' rankings as kept (their top 10 per question), by `#id` name: the calibration's runs."""
    out = {}
    for summary in store.runs.list():
        record = store.runs.load(summary.run_id)
        ranking = {q: {d["doc_id"]: float(d["score"]) if d.get("score") is not None else 0.0
                       for d in row.get("top_k", ())} for q, row in record.per_query.items() if row.get("top_k")}
        if ranking:
            out[f"#{summary.run_id}"] = ranking
    return out


def human_pairs(golden) -> dict[tuple[str, str], int]:
    """(query_id, doc_id) -> people's grade: the golden set's `relevance` (answerable questions)."""
    return {(q.query_id, d): g for q in golden.queries if not q.unanswerable for d, g in q.relevance.items()
            if 0 <= g <= 3}


def machine_pairs(found: Iterable[Any]) -> dict[tuple[str, str], int]:
    """(query_id, doc_id) -> the judge's grade, stale grades left out (the latest where a pair has several)."""
    out: dict[tuple[str, str], tuple[str, int]] = {}
    for g in found:
        if not getattr(g, "stale", False) and ((g.query_id, g.doc_id) not in out
                                                or g.at >= out[g.query_id, g.doc_id][0]):
            out[g.query_id, g.doc_id] = (g.at, g.grade)
    return {pair: grade for pair, (_, grade) in out.items()}


@dataclass(frozen=True)
class CollectionCalibration:
    """A judge's calibration on a collection, with what it rests on (`fingerprint`: of the pairs and runs)."""

    judge: str
    prompt_hash: str
    model: str
    calibration: Calibration
    runs: tuple[str, ...]
    fingerprint: str
    human: Mapping[tuple[str, str], int] = field(repr=False, default_factory=dict)
    machine: Mapping[tuple[str, str], int] = field(repr=False, default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """What an evaluation that used the judge records about the calibration it relied on."""
        return {"judge": self.judge, "prompt_hash": self.prompt_hash, "model": self.model,
                "fingerprint": self.fingerprint, "runs": list(self.runs), **self.calibration.to_dict()}


def collection_calibration(store: GradeStore, spec: JudgeSpec, *, bootstrap: int = 1000,
                           seed: int = 0) -> CollectionCalibration:
    """The judge's calibration against the collection's people (module docstring)."""
    human = human_pairs(store.golden.export())
    machine = machine_pairs(store.machine.grades(judge=spec.name, prompt_hash=spec.prompt_hash))
    runs = run_rankings(store)
    stats = calibrate(human, machine, runs or None, bootstrap=bootstrap, seed=seed)
    digest = hashlib.sha256(json.dumps([sorted((list(k), v) for k, v in human.items()),
                                        sorted((list(k), v) for k, v in machine.items()), sorted(runs)],
                                       separators=(",", ":")).encode()).hexdigest()
    return CollectionCalibration(spec.name, spec.prompt_hash, spec.model, stats, tuple(sorted(runs)),
                                 f"sha256:{digest[:16]}", human, machine)
