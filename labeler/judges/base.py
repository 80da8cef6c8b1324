"""What a judge takes and gives, the one protocol every kind follows, and `make_judge`.

A judge grades (question, document) pairs: `judge(pairs, progress=None)` yields, per pair, a
`MachineGrade` (a grade 0-3 with its provenance: judge, model, prompt hash, parameters, the
document's content hash, the raw answer) or a `JudgeFailure` (why that pair got no grade). A
failure is never a 0: the caller lists it. Results come in any order (an HTTP judge answers
as its requests finish); match them by (query_id, doc_id).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol, Self, runtime_checkable

from labeler.progress import Progress


@dataclass(frozen=True)
class JudgePair:
    """One (question, document) pair to grade, with what the judge is shown and the content hash
    the grade will be recorded against (`Document.content_hash`)."""

    query_id: str
    question: str
    doc_id: str
    title: str
    text: str
    doc_hash: str = ""

    @classmethod
    def of_document(cls, query_id: str, question: str, document) -> "JudgePair":
        """The pair of a question and a `labeler.corpus.Document` (its content hash recorded)."""
        return cls(query_id, question, document.doc_id, document.title, document.text, document.content_hash)


@dataclass(frozen=True)
class MachineGrade:
    """A judge's grade of one pair and where it came from (kept apart from human judgments)."""

    query_id: str
    doc_id: str
    grade: int
    judge: str
    model: str
    prompt_hash: str
    params: Mapping[str, Any]
    doc_hash: str
    raw: str
    rationale: str | None = None
    at: str = field(default_factory=lambda: utc_now())

    def __post_init__(self) -> None:
        if isinstance(self.grade, bool) or not isinstance(self.grade, int) or not 0 <= self.grade <= 3:
            raise ValueError(f"a machine grade is an integer 0-3, got {self.grade!r}")
        object.__setattr__(self, "params", dict(self.params))

    def to_dict(self) -> dict[str, Any]:
        """The record as plain data (a JSONL line of a judge's output)."""
        return {"query_id": self.query_id, "doc_id": self.doc_id, "grade": self.grade, "judge": self.judge,
                "model": self.model, "prompt_hash": self.prompt_hash, "params": dict(self.params),
                "doc_hash": self.doc_hash, "raw": self.raw, "rationale": self.rationale, "at": self.at}


@dataclass(frozen=True)
class JudgeFailure:
    """Why one pair got no grade (the endpoint failed, the answer held no grade 0-3, ...)."""

    query_id: str
    doc_id: str
    error: str


JudgeResult = MachineGrade | JudgeFailure


def utc_now() -> str:
    """The time now, ISO 8601 UTC to the second ("2026-12-02T03:04:05Z")."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@runtime_checkable
class Judge(Protocol):
    """Anything that grades pairs: a name, the spec it was made from, and `judge`."""

    name: str

    def judge(self, pairs: Iterable[JudgePair], progress: Progress | None = None) -> Iterator[JudgeResult]:
        """One MachineGrade or JudgeFailure per pair, in any order."""
        ...


class LocalJudge:
    """A judge that holds nothing to close (python, file, embedding): its spec, its name, and a no-op `with`."""

    def __init__(self, spec) -> None:
        self.spec = spec
        self.name = spec.name

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        pass


def grade_of(spec, pair: JudgePair, grade: int, raw: str, rationale: str | None = None,
             params: Mapping[str, Any] | None = None) -> MachineGrade:
    """A MachineGrade of `pair` by the judge declared in `spec` (params: the spec's unless given)."""
    shown = {k: v for k, v in (spec.params if params is None else params).items() if k != "headers"}
    return MachineGrade(pair.query_id, pair.doc_id, grade, spec.name, spec.model, spec.prompt_hash, shown,
                        pair.doc_hash, raw, rationale)


def make_judge(spec, *, environ: Mapping[str, str] = os.environ, embedder=None,
               allowed_hosts: frozenset[str] | None = None) -> Judge:
    """The judge a `JudgeSpec` declares. `environ` resolves `${NAME}` references (openai),
    `embedder` is the embedding judge's `labeler.retrieval.embedding.Embedder` (loaded on first use if None),
    `allowed_hosts` the only hosts an openai judge may call (team mode; None: any)."""
    from labeler.errors import ConfigError

    if spec.kind == "openai":
        from labeler.judges.openai import OpenAIJudge

        return OpenAIJudge(spec, environ=environ, allowed_hosts=allowed_hosts)
    if spec.kind == "python":
        from labeler.judges.pyjudge import CallableJudge

        return CallableJudge(spec)
    if spec.kind == "file":
        from labeler.judges.filejudge import FileJudge

        return FileJudge(spec)
    if spec.kind == "embedding":
        from labeler.judges.embedding import EmbeddingJudge

        return EmbeddingJudge(spec, embedder=embedder)
    raise ConfigError(f"judge {spec.name!r}: no judge of kind {spec.kind!r}",
                      hint='kind is one of "openai", "python", "file", "embedding".')
