"""The one protocol every ranking system follows, and what a batch of searches returns.

`System.search(question, k)` ranks documents for one question; `System.search_many(questions, k)`
runs a golden set's questions and returns a `SystemRun`: the ranked hits of every question that
was answered AND, per question, why one was not. A failure is never an empty ranking: the caller
decides whether a failed question scores 0 or stops the evaluation.
"""
from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from labeler.errors import ConfigError, LabelerError
from labeler.ids import id_problem
from labeler.progress import Progress

SECRET_MASK = "***"


@dataclass(frozen=True)
class Hit:
    """A ranked document from a system: its id and score (higher is better)."""

    doc_id: str
    score: float


class SearchFailed(LabelerError):
    """One question could not be answered by a system (endpoint down, bad response, callable raised).

    `kind` says what failed: connection, timeout, http_status, bad_json, mapping, bad_return,
    exception, not_in_run. `attempts` counts the calls made for the question.
    """

    def __init__(self, message: str, *, kind: str, attempts: int = 1, hint: str | None = None) -> None:
        self.kind = kind
        self.attempts = attempts
        super().__init__(message, hint=hint)


@dataclass(frozen=True)
class QuestionError:
    """Why one question got no ranking: the kind of failure, its one-line message (hint included),
    calls made, and the hint alone (so a message built around it need not repeat it)."""

    query_id: str
    kind: str
    message: str
    attempts: int = 1
    hint: str | None = None

    @classmethod
    def of(cls, query_id: str, exc: SearchFailed, attempts: int | None = None) -> "QuestionError":
        """The error `exc` raised for `query_id` (attempts: the exception's own unless given)."""
        return cls(query_id, exc.kind, str(exc), exc.attempts if attempts is None else attempts, exc.hint)

    @property
    def reason(self) -> str:
        """The message without its hint."""
        return self.message.removesuffix(f" Hint: {self.hint}") if self.hint else self.message


@dataclass(frozen=True)
class SystemRun:
    """The outcome of `search_many`: ranked hits per answered question, errors per failed one.

    `query_ids` is every question asked, in order; each is in exactly one of `hits` and `errors`.
    `calls` counts the calls made to the system (HTTP requests with retries included).
    """

    system: Mapping[str, Any]
    k: int
    query_ids: tuple[str, ...]
    hits: Mapping[str, tuple[Hit, ...]]
    errors: Mapping[str, QuestionError]
    calls: int = 0
    seconds: float = 0.0

    @property
    def retries(self) -> int:
        """Calls beyond the first one per question (retried requests)."""
        return max(0, self.calls - len(self.query_ids))

    @property
    def failed(self) -> int:
        """How many questions got no ranking."""
        return len(self.errors)

    @property
    def answered(self) -> int:
        """How many questions got a ranking (possibly empty: the system found nothing)."""
        return len(self.hits)

    @property
    def ok(self) -> bool:
        """True when every question was answered."""
        return not self.errors

    def run(self) -> dict[str, dict[str, float]]:
        """The plain run shape `{query_id: {doc_id: score}}` of the answered questions."""
        return {q: {h.doc_id: h.score for h in self.hits[q]} for q in self.query_ids if q in self.hits}

    def error_counts(self) -> dict[str, int]:
        """Failed questions per error kind, e.g. {"timeout": 3, "http_status": 1}."""
        counts: dict[str, int] = {}
        for error in self.errors.values():
            counts[error.kind] = counts.get(error.kind, 0) + 1
        return counts

    def summary(self) -> str:
        """One line: how many questions were answered and, if any failed, why."""
        line = f"{self.answered} of {len(self.query_ids)} questions answered"
        if self.errors:
            kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.error_counts().items()))
            first = self.errors[next(q for q in self.query_ids if q in self.errors)]
            line += f"; {self.failed} failed ({kinds}); first: {first.query_id}: {first.message}"
        return line


@dataclass(frozen=True)
class QueryProbe:
    """What a "test query" shows: the mapped hits or the error, and for an endpoint its raw answer."""

    question: str
    hits: tuple[Hit, ...] = ()
    error: str | None = None
    status: int | None = None
    raw_text: str | None = None
    raw_json: Any = None
    request: Mapping[str, Any] | None = None
    seconds: float = 0.0


def doc_hits(pairs: Iterable[tuple[str, float]], k: int) -> tuple[Hit, ...]:
    """(doc_id, score) pairs in the system's order -> at most k document Hits, one per document.

    A document listed more than once (several of its chunks) keeps its first position and its
    best score, so a chunk-level system is scored on documents as the built-in pipeline is.
    """
    best: dict[str, float] = {}
    for doc_id, score in pairs:
        if doc_id not in best or score > best[doc_id]:
            best[doc_id] = score
    return tuple(Hit(d, s) for d, s in list(best.items())[:k])


def check_doc_id(value: Any, where: str) -> str:
    """A returned doc id as a string (integers are converted); anything else raises SearchFailed."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    problem = id_problem(value, "doc id")
    if problem:
        raise SearchFailed(f"{where}: {problem}", kind="mapping")
    return value


def check_score(value: Any, where: str) -> float:
    """A returned score as a finite float (numeric strings accepted); anything else raises SearchFailed."""
    if isinstance(value, bool) or value is None or isinstance(value, (list, dict)):
        raise SearchFailed(f"{where}: score must be a number, got {value!r}", kind="mapping")
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise SearchFailed(f"{where}: score must be a number, got {value!r}", kind="mapping") from None
    if not math.isfinite(score):
        raise SearchFailed(f"{where}: score is {value!r}, not a finite number", kind="mapping")
    return score


def check_k(k: Any) -> int:
    """k as a positive int; anything else raises ConfigError."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive whole number, got {k!r}", hint="e.g. k=10.")
    return k


class System(ABC):
    """Anything that ranks documents for a question: built-in pipeline, endpoint, callable, run file."""

    kind: str = "system"
    name: str = ""

    @abstractmethod
    def search(self, question: str, k: int) -> list[Hit]:
        """The top k documents for `question`, best first; raises SearchFailed when it cannot answer."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The declared config, secrets excluded: what a saved run records about this system."""

    def search_many(self, questions: Mapping[str, str], k: int, *, progress: Progress | None = None) -> SystemRun:
        """Search every question (`{query_id: question}`): hits per answered one, an error per failed one."""
        k = check_k(k)
        t0 = time.perf_counter()
        hits: dict[str, tuple[Hit, ...]] = {}
        errors: dict[str, QuestionError] = {}
        calls = 0
        for i, (query_id, question) in enumerate(questions.items(), start=1):
            try:
                hits[query_id] = tuple(self.search(question, k))
                calls += 1
            except SearchFailed as exc:
                errors[query_id] = QuestionError.of(query_id, exc)
                calls += exc.attempts
            if progress and (i % 25 == 0 or i == len(questions)):
                progress(i, len(questions), "searching")
        return SystemRun(self.describe(), k, tuple(questions), hits, errors, calls, time.perf_counter() - t0)

    def test_query(self, question: str, k: int = 10) -> QueryProbe:
        """Run one question for a "test query" button: the hits, or the error as text (never raised)."""
        t0 = time.perf_counter()
        try:
            hits = tuple(self.search(question, check_k(k)))
        except SearchFailed as exc:
            return QueryProbe(question, error=str(exc), seconds=time.perf_counter() - t0)
        return QueryProbe(question, hits=hits, seconds=time.perf_counter() - t0)

    def close(self) -> None:
        """Release connections or files the system holds (nothing by default)."""

    def __enter__(self) -> "System":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
