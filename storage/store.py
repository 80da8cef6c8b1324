"""The labeler database behind one facade: `Store`, and `open_store` to get one.

One `Store` per database URL (SQLite by default: one file under `$LABELER_HOME`). Each public
method is one transaction: the Store opens it (see labeler_storage.engine) and calls a function of the
module that owns the topic with the open connection:
- labeler_storage.collection: collections and their revision counter;
- labeler_storage.questions: questions and judgments, one question's status;
- labeler_storage.question_index: the question list computed in SQL;
- labeler_storage.golden_io: golden-set import and export;
- labeler_storage.runs: saved evaluation runs.
Composition rather than mixins: the topic modules are plain functions over a `Connection`, so
a transaction's extent is visible here in one place, and one write (an import) can combine
several topics' functions inside one transaction.

Consensus: floor of the median grade over the annotators (see labeler.agreement); the import
pseudo-annotator's grade counts only for documents no person graded (it never shifts people's
consensus), and agreement statistics leave it out.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from labeler.agreement import AgreementReport, Consensus, Ratings, agreement, consensus
from labeler.corpus import Corpus, Document
from labeler.golden import GoldenHealth, GoldenSet, golden_health
from labeler_storage import collection as C
from labeler_storage import adjudication, golden_io, grade_sources, question_index, questions, runs, versions, work_queue
from labeler_storage import schema as S
from labeler_storage.accounts import Accounts
from labeler_storage.clock import database_clock
from labeler_storage.engine import Database, default_db_url, normalize_db_url
from labeler_storage.grade_sources_store import GradeSourceStore
from labeler_storage.machine_grades import MachineGradeStore
from labeler_storage.records import (
    DEFAULT_COLLECTION, IMPORT_ANNOTATOR, Collection, GradeEvent, ImportPlan, ImportSummary, Judgment, Question,
    QuestionStatus, QuestionSummary, RunRecord, RunSummary, is_file_source,
)
from labeler_storage.suggestions import SuggestionStore
from labeler_storage.versions import CorpusVersion, StaleJudgment
from labeler_storage.work_queue_store import LEASE_MINUTES, WorkQueueStore

__all__ = ["DEFAULT_COLLECTION", "IMPORT_ANNOTATOR", "Store", "default_db_url", "normalize_db_url", "open_store"]



def open_store(url: str | Path | None = None, *, synchronous: str = "FULL") -> "Store":
    """Open (creating and migrating as needed) the database at `url` (default: default_db_url()).

    `synchronous` is SQLite's durability level. FULL (the default) fsyncs every commit, so a
    label survives a power cut; it costs about 5 ms per write, which no annotator notices.
    NORMAL skips that fsync (still safe against a crashed or killed process); tests whose
    subject is locking, not the disk, use it to run thousands of commits quickly.
    """
    store = Store(normalize_db_url(url), synchronous=synchronous)
    store.migrate()
    return store


class Store(MachineGradeStore, WorkQueueStore, SuggestionStore, GradeSourceStore):
    """Repository over one database; safe to share between threads (st.cache_resource)."""

    def __init__(self, url: str, *, synchronous: str = "FULL") -> None:
        self._db = Database(url, synchronous=synchronous)
        self.url = url
        self.engine = self._db.engine
        self.accounts = Accounts(self._db)  # team mode: users, roles, sessions, settings
        self._index_cache = question_index.QuestionIndexCache()  # per question, recomputed when it changes

    clock = database_clock("The one clock every write of this store reads (storage/clock.py); tests set it.")

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Release pooled connections."""
        self._db.close()

    def migrate(self) -> list[int]:
        """Apply pending migrations; the versions applied (empty when up to date)."""
        return self._db.migrate()

    def schema_version(self) -> int:
        """The database's schema version."""
        return self._db.schema_version()

    # ---- collections

    def ensure_collection(self, collection: str = DEFAULT_COLLECTION, *, corpus_path: str | None = None,
                          corpus_fingerprint: str | None = None, by: str = "", corpus: Corpus | None = None) -> Collection:
        """The collection, created if missing; a given corpus path/fingerprint is recorded on it (by `by`).
        With `corpus`, its content is also recorded as a new corpus version when it changed."""
        with self._db.write() as conn:
            cid = C.collection_id(conn, collection, create=True)
            fingerprint = corpus.fingerprint if corpus is not None else corpus_fingerprint
            changed = C.record_corpus(conn, cid, corpus_path, fingerprint, by=by)
            if corpus is not None and versions.record_version(conn, cid, corpus, corpus_path, by=by) is not None:
                changed = True  # judgments may be stale now
            if changed:
                C.bump_revision(conn, cid)  # the export's fallback fingerprint changed
            return C.to_collection(C.collection_row(conn, collection))

    def corpus_versions(self, collection: str = DEFAULT_COLLECTION) -> list[CorpusVersion]:
        """The collection's corpus versions with their diffs, newest first ([] without a collection)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return versions.versions(conn, row.id) if row is not None else []

    def stale_judgments(self, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
                        annotator: str | None = None) -> list[StaleJudgment]:
        """Judgments whose document was edited or deleted since they were given (current version)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            if row is None:
                return []
            return versions.stale_judgments(conn, row.id, query_id=query_id, annotator=annotator)

    def current_doc_hashes(self, *, collection: str = DEFAULT_COLLECTION) -> dict[str, str] | None:
        """{doc_id: content hash} of the collection's current corpus version (None before one)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return versions.current_hashes(conn, row.id) if row is not None else None

    def judged_content(self, doc_hash: str | None) -> Document | None:
        """The document as a judge saw it, by content hash (doc_id empty), or None if not kept."""
        with self._db.read() as conn:
            return versions.text_of(conn, doc_hash)

    def get_collection(self, collection: str = DEFAULT_COLLECTION) -> Collection | None:
        """The collection, or None."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            return C.to_collection(row) if row is not None else None

    def list_collections(self) -> list[Collection]:
        """Every collection, by name."""
        with self._db.read() as conn:
            return [C.to_collection(r) for r in conn.execute(sa.select(S.collections).order_by(S.collections.c.name))]

    def delete_collection(self, collection: str) -> bool:
        """Delete a collection with its questions, judgments and runs; False if it did not exist."""
        self._index_cache.forget(collection)
        with self._db.write() as conn:
            return conn.execute(S.collections.delete().where(S.collections.c.name == collection)).rowcount > 0

    def revision(self, *, collection: str = DEFAULT_COLLECTION) -> int:
        """A counter bumped by every write to the collection (0 while it does not exist): a cache key."""
        with self._db.read() as conn:
            return C.revision(conn, collection)

    # ---- questions

    def add_question(self, text: str, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
                     query_type: str = "", notes: str = "", author: str = "", unanswerable: bool = False,
                     extra: Mapping[str, Any] | None = None, corpus_fingerprint: str | None = None) -> Question:
        """Add a question (query_id defaults to the next free `q-0001`-style id); creates the collection."""
        with self._db.write() as conn:
            return questions.add_question(
                conn, text, collection=collection, query_id=query_id, query_type=query_type, notes=notes,
                author=author, unanswerable=unanswerable, extra=extra, corpus_fingerprint=corpus_fingerprint)

    def edit_question(self, query_id: str, *, collection: str = DEFAULT_COLLECTION, text: str | None = None,
                      query_type: str | None = None, notes: str | None = None,
                      extra: Mapping[str, Any] | None = None, by: str = "") -> Question:
        """Change the given fields of a question (None leaves a field as it is); `by` is who."""
        values = {k: v for k, v in (("text", text), ("query_type", query_type), ("notes", notes),
                                    ("extra", None if extra is None else dict(extra))) if v is not None}
        if values:
            values["updated_by"] = by
        with self._db.write() as conn:
            return questions.edit_question(conn, query_id, collection=collection, values=values)

    def delete_question(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> bool:
        """Delete a question and its judgments; False if there was no such question."""
        with self._db.write() as conn:
            return questions.delete_question(conn, query_id, collection=collection)

    def get_question(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> Question | None:
        """The question, or None."""
        with self._db.read() as conn:
            row = questions.question_row(conn, collection, query_id, required=False)
            return questions.to_question(row) if row is not None else None

    def set_unanswerable(self, query_id: str, unanswerable: bool = True, *,
                         collection: str = DEFAULT_COLLECTION, by: str = "") -> Question:
        """Record (or withdraw) `by`'s vote that no document answers the question (refused while they
        grade one of its documents >= 1); the question's flag becomes the consensus (labeler_storage.votes)."""
        with self._db.write() as conn:
            return questions.set_unanswerable(conn, query_id, unanswerable, collection=collection, by=by)

    # ---- judgments

    def set_judgment(self, query_id: str, doc_id: str, grade: int, *, annotator: str,
                     collection: str = DEFAULT_COLLECTION, note: str = "", doc: Document | None = None) -> Judgment:
        """Record `annotator`'s grade (0-3) for a document of a question, replacing their earlier one
        (`doc`: the document as they saw it, whose content hash the grade keeps). A claim they hold on
        the question (the work queue) is renewed in the same transaction: they are working on it."""
        with self._db.write() as conn:
            judgment = questions.set_judgment(conn, query_id, doc_id, grade, annotator=annotator,
                                              collection=collection, note=note, doc=doc)
            self._renew(conn, collection, query_id, annotator)
            return judgment

    def confirm_judgment(self, query_id: str, doc_id: str, *, annotator: str, doc: Document,
                         collection: str = DEFAULT_COLLECTION) -> bool:
        """`annotator`'s grade still holds for the document as it is now: it is current again."""
        with self._db.write() as conn:
            return questions.confirm_judgment(conn, query_id, doc_id, annotator=annotator, collection=collection,
                                              doc=doc)

    def clear_judgment(self, query_id: str, doc_id: str, *, annotator: str,
                       collection: str = DEFAULT_COLLECTION) -> bool:
        """Remove `annotator`'s grade for the document (renewing their claim, as a grade does); False if there was none."""
        with self._db.write() as conn:
            done = questions.clear_judgment(conn, query_id, doc_id, annotator=annotator, collection=collection)
            self._renew(conn, collection, query_id, annotator)
            return done

    def _renew(self, conn: Any, collection: str, query_id: str, annotator: str) -> None:
        work_queue.renew_claim(conn, collection, query_id, annotator, now=self.clock(),
                               lease=timedelta(minutes=LEASE_MINUTES))

    def judgments(self, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
                  annotator: str | None = None) -> list[Judgment]:
        """Judgments of a collection, optionally of one question and/or one annotator."""
        with self._db.read() as conn:
            return questions.judgment_rows(conn, C.collection_id(conn, collection), query_id, annotator)

    def grade_history(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> list[GradeEvent]:
        """Every grade given on the question, current and replaced, by document then time."""
        with self._db.read() as conn:
            return questions.grade_history(conn, query_id, collection=collection)

    # ---- listing, status, consensus, agreement, health

    def question_status(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> QuestionStatus | None:
        """One question with its judgments, consensus grades and status (reads only its rows); None if missing."""
        with self._db.read() as conn:
            return questions.question_status(conn, query_id, collection=collection)

    def question_index(self, *, collection: str = DEFAULT_COLLECTION,
                       with_annotators: bool = False) -> list[QuestionSummary]:
        """Every question (creation order) with status and judged-document count, from SQL; with
        `with_annotators`, also who judged each (one more scan of the judgments)."""
        with self._db.read() as conn:
            return question_index.question_index(conn, collection=collection, with_annotators=with_annotators,
                                                 cache=self._index_cache)

    def annotator_spelling(self, name: str) -> str:
        """The spelling already in use for this annotator (same name up to case and spaces), else `name`
        with its spaces tidied: "alice " and "Alice" are one annotator, shown as first typed."""
        key = " ".join(name.split()).casefold()
        with self._db.read() as conn:
            known = conn.execute(sa.union(sa.select(S.judgments.c.annotator),
                                          sa.select(S.unanswerable_votes.c.annotator))).scalars().all()
        return next((a for a in sorted(known) if " ".join(a.split()).casefold() == key), " ".join(name.split()))

    def judged_by(self, annotator: str, *, collection: str = DEFAULT_COLLECTION) -> dict[str, int]:
        """query_id -> documents `annotator` judged on it, 0 where they only voted it unanswerable
        (absent: neither); {} while there is no collection."""
        with self._db.read() as conn:
            if C.revision(conn, collection) == 0:
                return {}
            return question_index.judged_by(conn, collection=collection, annotator=annotator)

    def list_questions(self, *, collection: str = DEFAULT_COLLECTION) -> list[QuestionStatus]:
        """Every question (in creation order) with its judgments, consensus grades and status."""
        with self._db.read() as conn:
            return questions.list_questions(conn, collection=collection)

    def ratings(self, *, collection: str = DEFAULT_COLLECTION) -> Ratings:
        """(query_id, doc_id) -> {annotator: grade} for the collection."""
        ratings: dict[tuple[str, str], dict[str, int]] = {}
        for j in self.judgments(collection=collection):
            ratings.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.grade
        return ratings

    def consensus(self, *, collection: str = DEFAULT_COLLECTION) -> Consensus:
        """Consensus grade per (question, document), and the disagreements (largest spread first)."""
        with self._db.read() as conn:
            row = C.collection_row(conn, collection)
            apart = grade_sources.apart(conn, row.id) if row is not None else frozenset()
        return consensus(self.ratings(collection=collection), stand_in=is_file_source, apart=apart)

    def agreement(self, *, collection: str = DEFAULT_COLLECTION) -> AgreementReport:
        """Cohen's kappa per annotator pair, Fleiss' kappa, Krippendorff's alpha (people only)."""
        ratings = self.ratings(collection=collection)
        return agreement(ratings, exclude={a for by in ratings.values() for a in by if is_file_source(a)})

    def health(self, *, collection: str = DEFAULT_COLLECTION) -> GoldenHealth:
        """Question count, unanswerable share, per-type counts, questions with no relevant doc yet."""
        return golden_health(self.export_golden(collection=collection))

    # ---- adjudication (labeler_storage.adjudication)

    def adjudicate(self, query_id: str, doc_id: str, grade: int | None, *, by: str, note: str = "",
                   collection: str = DEFAULT_COLLECTION) -> adjudication.Adjudication | None:
        """Set the final grade of a document for a question (None withdraws it); it outweighs the consensus."""
        with self._db.write() as conn:
            return adjudication.adjudicate(conn, collection, query_id, doc_id, grade, by=by, note=note)

    def adjudications(self, *, collection: str = DEFAULT_COLLECTION
                      ) -> dict[tuple[str, str], adjudication.Adjudication]:
        """(query_id, doc_id) -> its adjudication."""
        with self._db.read() as conn:
            return adjudication.adjudications(conn, collection)

    # ---- golden sets

    def export_golden(self, *, collection: str = DEFAULT_COLLECTION, complete_only: bool = False,
                      mark_stale: bool = False, with_machine: bool = False) -> GoldenSet:
        """The collection's golden set with consensus grades and content hashes (complete_only: done or
        unanswerable only; mark_stale: list each question's stale documents as `stale_docs`;
        with_machine: each question's machine grades, apart from `relevance`)."""
        with self._db.read() as conn:
            return golden_io.export_golden(conn, collection=collection, complete_only=complete_only,
                                           mark_stale=mark_stale, with_machine=with_machine)

    def import_golden(self, golden: GoldenSet, *, collection: str = DEFAULT_COLLECTION,
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
            if corpus is not None:
                versions.record_version(conn, C.collection_id(conn, collection, create=True), corpus, corpus_path, by=by)
                corpus_fingerprint = corpus.fingerprint
            return golden_io.import_golden(conn, golden, collection=collection, corpus_path=corpus_path,
                                           corpus_fingerprint=corpus_fingerprint, progress=progress, by=by,
                                           corpus=corpus, on_conflict=on_conflict, file_name=file_name,
                                           count_file_grades=count_file_grades)

    def plan_import(self, golden: GoldenSet, *, collection: str = DEFAULT_COLLECTION) -> ImportPlan:
        """Which questions of `golden` are new, identical or conflicting in the collection (writes nothing)."""
        with self._db.read() as conn:
            return golden_io.plan(conn, golden, collection=collection)

    # ---- runs

    def save_run(self, config: Any, *, summary: Mapping[str, Any], per_query: Mapping[str, Any],
                 golden_hash: str, corpus_fingerprint: str | None = None, config_hash: str | None = None,
                 name: str = "", collection: str = DEFAULT_COLLECTION, by: str = "",
                 corpus_path: str | None = None) -> RunRecord:
        """Store an evaluation run with the corpus it searched; `config` is a RunConfig (or any JSON-able mapping)."""
        with self._db.write() as conn:
            run_id = runs.save_run(conn, config, summary=summary, per_query=per_query, golden_hash=golden_hash,
                                   corpus_fingerprint=corpus_fingerprint, config_hash=config_hash, name=name,
                                   collection=collection, by=by, corpus_path=corpus_path)
        return self.load_run(run_id)

    def list_runs(self, *, collection: str = DEFAULT_COLLECTION, limit: int | None = None) -> list[RunSummary]:
        """Saved runs of a collection, newest first (no per-question detail)."""
        with self._db.read() as conn:
            return runs.list_runs(conn, collection=collection, limit=limit)

    def load_run(self, run_id: int) -> RunRecord:
        """A saved run with its config and per-question results."""
        with self._db.read() as conn:
            return runs.load_run(conn, run_id)

    def delete_run(self, run_id: int) -> bool:
        """Delete a saved run; False if there was none."""
        with self._db.write() as conn:
            return runs.delete_run(conn, run_id)
