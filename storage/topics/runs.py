"""`store.runs`: saved evaluation runs (labeler_storage.runs)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from labeler_storage import runs
from labeler_storage.records import DEFAULT_COLLECTION, RunRecord, RunSummary
from labeler_storage.topics.base import Topic


class Runs(Topic):
    """Evaluation runs saved with what made them, the corpus they searched and their golden set."""

    def save(self, config: Any, *, summary: Mapping[str, Any], per_query: Mapping[str, Any],
             golden_hash: str, corpus_fingerprint: str | None = None, config_hash: str | None = None,
             name: str = "", collection: str = DEFAULT_COLLECTION, by: str = "",
             corpus_path: str | None = None) -> RunRecord:
        """Store an evaluation run with the corpus it searched; `config` is a RunConfig (or any JSON-able mapping)."""
        with self._db.write() as conn:
            run_id = runs.save_run(conn, config, summary=summary, per_query=per_query, golden_hash=golden_hash,
                                   corpus_fingerprint=corpus_fingerprint, config_hash=config_hash, name=name,
                                   collection=collection, by=by, corpus_path=corpus_path)
        return self.load(run_id)

    def list(self, *, collection: str = DEFAULT_COLLECTION, limit: int | None = None) -> list[RunSummary]:
        """Saved runs of a collection, newest first (no per-question detail)."""
        with self._db.read() as conn:
            return runs.list_runs(conn, collection=collection, limit=limit)

    def load(self, run_id: int) -> RunRecord:
        """A saved run with its config and per-question results."""
        with self._db.read() as conn:
            return runs.load_run(conn, run_id)

    def delete(self, run_id: int) -> bool:
        """Delete a saved run; False if there was none."""
        with self._db.write() as conn:
            return runs.delete_run(conn, run_id)
