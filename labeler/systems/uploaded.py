"""`RunFileSystem`: a fixed ranking uploaded as a TREC run file, as a System.

Its rankings are keyed by query id, so `search_many` (which has the ids) is how it is scored; a
golden-set question absent from the run fails with kind "not_in_run" (trec_eval would score it
0 — the caller sees it rather than an empty ranking). `search(question, k)` finds the query id
through the `questions` mapping given at construction, or takes the question as a query id.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from labeler.metrics.rankings import trec_ranked
from labeler.progress import Progress
from labeler.runfile import read_run, serialize_run
from labeler.systems.base import Hit, QuestionError, SearchFailed, System, SystemRun, check_k


class RunFileSystem(System):
    """A TREC run (path, open file, literal run text, or a parsed `{qid: {doc: score}}`) as a System."""

    kind = "run"

    def __init__(self, source: str | Path | IO[str] | Mapping[str, Mapping[str, float]], *,
                 name: str | None = None, questions: Mapping[str, str] | None = None) -> None:
        if isinstance(source, Mapping):
            self.run = {q: dict(docs) for q, docs in source.items()}
            self.path = None
        else:
            self.run = read_run(source)
            is_path = isinstance(source, Path) or (isinstance(source, str) and "\n" not in source)
            self.path = str(source) if is_path else getattr(source, "name", None)
        self.name = name or (Path(self.path).name if self.path else "uploaded-run")
        # What the ranking is, whatever file it came from: two uploads of one ranking compare equal.
        self.sha256 = "sha256:" + hashlib.sha256(serialize_run(self.run).encode()).hexdigest()
        self._qid_of = {text: qid for qid, text in (questions or {}).items()}

    def describe(self) -> dict[str, Any]:
        """Kind, name, file path, a hash of the ranking, and how many queries it ranks."""
        return {"kind": self.kind, "name": self.name, "path": self.path, "sha256": self.sha256,
                "queries": len(self.run)}

    def _ranking(self, query_id: str, k: int) -> list[Hit]:
        if query_id not in self.run:
            raise SearchFailed(f"query {query_id!r} is not in the run file", kind="not_in_run",
                               hint="upload a run that ranks every question of the golden set.")
        return [Hit(d, s) for d, s in trec_ranked(self.run[query_id])[:k]]

    def search(self, question: str, k: int) -> list[Hit]:
        """The run's ranking for this question (found by its text, or taken as a query id)."""
        return self._ranking(self._qid_of.get(question, question), check_k(k))

    def search_many(self, questions: Mapping[str, str], k: int, *, progress: Progress | None = None) -> SystemRun:
        """The run's ranking of each query id (top k, trec_eval order); ids absent fail as not_in_run."""
        k = check_k(k)
        t0 = time.perf_counter()
        hits, errors = {}, {}
        for query_id in questions:
            try:
                hits[query_id] = tuple(self._ranking(query_id, k))
            except SearchFailed as exc:
                errors[query_id] = QuestionError.of(query_id, exc, attempts=0)
        if progress:
            progress(len(questions), len(questions), "searching")
        return SystemRun(self.describe(), k, tuple(questions), hits, errors, 0, time.perf_counter() - t0)
