"""`store.golden`: a collection as a golden set: export, import in one transaction, the import's plan,
and its health (labeler_storage.golden_io, labeler_storage.import_plan)."""
from __future__ import annotations

from collections.abc import Callable

from labeler.corpus import Corpus
from labeler.golden import GoldenHealth, GoldenSet, golden_health
from labeler_storage import collection as C
from labeler_storage import golden_io, versions
from labeler_storage.records import DEFAULT_COLLECTION, ImportPlan, ImportSummary
from labeler_storage.topics.base import Topic


class Golden(Topic):
    """The golden set a collection holds, in and out (`import` is a keyword: `import_set`)."""

    def export(self, *, collection: str = DEFAULT_COLLECTION, complete_only: bool = False,
               mark_stale: bool = False, with_machine: bool = False) -> GoldenSet:
        """The collection's golden set with consensus grades and content hashes (complete_only: done or
        unanswerable only; mark_stale: list each question's stale documents as `stale_docs`;
        with_machine: each question's machine grades, apart from `relevance`)."""
        with self._db.read() as conn:
            return golden_io.export_golden(conn, collection=collection, complete_only=complete_only,
                                           mark_stale=mark_stale, with_machine=with_machine)

    def import_set(self, golden: GoldenSet, *, collection: str = DEFAULT_COLLECTION,
                   corpus_path: str | None = None, corpus_fingerprint: str | None = None,
                   progress: Callable[[int, int], None] | None = None, by: str = "",
                   corpus: Corpus | None = None, on_conflict: str | None = None, file_name: str = "",
                   count_file_grades: bool = True) -> ImportSummary:
        """Import a (validated) golden set in ONE transaction: all of it, or nothing (`corpus`: records
        its version and hashes the file's judged documents against it where the file has no hashes).

        New questions are added, identical ones left; a conflicting one (labeler_storage.import_plan) is
        added under a fresh id, skipped or replaced as `on_conflict` says ("new", "skip", "replace");
        without a choice, conflicts raise ImportConflictError and nothing is written. Questions not in
        the file are kept. `progress(done, total)` is called inside the transaction after each batch.
        A consensus-only file's grades become a grade source named by `file_name` and the time, counted
        in the consensus (where no person graded the document) if `count_file_grades`.
        """
        with self._db.write() as conn:
            new_version = False
            if corpus is not None:
                cid = C.collection_id(conn, collection, create=True)
                # judgments may be stale now, even where every question is identical: a change
                new_version = versions.record_version(conn, cid, corpus, corpus_path, by=by) is not None
                corpus_fingerprint = corpus.fingerprint
            return golden_io.import_golden(conn, golden, collection=collection, corpus_path=corpus_path,
                                           new_version=new_version,
                                           corpus_fingerprint=corpus_fingerprint, progress=progress, by=by,
                                           corpus=corpus, on_conflict=on_conflict, file_name=file_name,
                                           count_file_grades=count_file_grades)

    def plan(self, golden: GoldenSet, *, collection: str = DEFAULT_COLLECTION) -> ImportPlan:
        """Which questions of `golden` are new, identical or conflicting in the collection (writes nothing)."""
        with self._db.read() as conn:
            return golden_io.plan(conn, golden, collection=collection)

    def health(self, *, collection: str = DEFAULT_COLLECTION) -> GoldenHealth:
        """Question count, unanswerable share, per-type counts, questions with no relevant doc yet."""
        return golden_health(self.export(collection=collection))
