"""Golden sets in and out of the database, inside the caller's transaction.

Export: each question with its consensus `relevance` (adjudicated grades outweigh it) and, beside
it, everything the collection holds about it: each annotator's grades, votes, adjudications,
content hashes, the replaced grades. Import: labeler_storage.import_plan classifies each question of the
file (new, identical, conflicting); new ones are written with the state the file gives (so an
export imported into any collection exports the same bytes), identical ones are left, and
conflicting ones only as the caller chose. A consensus-only file's grades and `unanswerable` flag
are one voice, a new grade source named by the file and the import time (labeler_storage.grade_sources),
counted in the consensus or kept apart as the caller chose; the annotators it names are kept as the
question's credited annotators.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.agreement import consensus
from labeler.corpus import Corpus
from labeler.corpus.versions import DOC_HASHES_FIELD
from labeler.errors import ImportConflictError, InputError
from labeler.golden import GoldenQuery, GoldenSet
from labeler.status import status_of
from labeler_storage import schema as S
from labeler_storage import grade_sources, machine_grades, versions, votes
from labeler_storage.adjudication import adjudications
from labeler_storage.checks import check_id, check_stored_grade, chunks
from labeler_storage.clock import now_iso
from labeler_storage.collection import bump_revision, collection_id, collection_row, record_corpus
from labeler_storage.import_plan import (
    ADJUDICATED, ANNOTATION_HASHES, ANNOTATION_NOTES, ANNOTATIONS, FILE_VOICE, HISTORY, HISTORY_KEYS, VOTES,
    check_full_fields, file_adjudicated, file_grades, file_voters, plan_import,
)
from labeler_storage.questions import (
    free_ids, judgment_rows, keep_history, question_query, to_question,
    write_judgments,
)
from labeler_storage.records import ImportPlan, ImportSummary, is_file_source


def export_golden(conn: Connection, *, collection: str, complete_only: bool, mark_stale: bool = False,
                  with_machine: bool = False) -> GoldenSet:
    """The collection's golden set: consensus `relevance` (adjudicated grades outweigh it) beside
    everything an import needs to reproduce the collection exactly: each annotator's grades
    (`annotations`), the content hash of each judged document (`doc_hashes`, the latest grade's;
    `annotation_hashes` where one annotator's grade was given against other content), their notes
    (`annotation_notes`), votes,
    adjudications and the replaced grades (`grade_history`). complete_only: done or unanswerable
    questions only; mark_stale: each question's documents whose judgments are stale (`stale_docs`);
    with_machine: each question's machine grades with their provenance under their own field
    (MACHINE_FIELD), never in `relevance`."""
    coll = collection_row(conn, collection)
    cid = collection_id(conn, collection)
    rows = conn.execute(question_query().where(S.questions.c.collection_id == cid).order_by(S.questions.c.id)).all()
    questions = [to_question(r) for r in rows]
    by_id = votes.votes_by_question(conn, [r.id for r in rows])
    voted = {r.query_id: by_id[r.id] for r in rows if r.id in by_id}
    ratings: dict[tuple[str, str], dict[str, int]] = {}
    given: dict[str, dict[str, dict[str, tuple[str, str | None]]]] = {}  # query -> annotator -> doc -> (time, hash)
    people: dict[str, set[str]] = {}
    notes: dict[str, dict[str, dict[str, str]]] = {}
    for j in judgment_rows(conn, cid):
        ratings.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.grade
        if j.note:
            notes.setdefault(j.query_id, {}).setdefault(j.annotator, {})[j.doc_id] = j.note
        given.setdefault(j.query_id, {}).setdefault(j.annotator, {})[j.doc_id] = (j.updated_at, j.doc_hash)
        if not is_file_source(j.annotator):
            people.setdefault(j.query_id, set()).add(j.annotator)
    qrels = consensus(ratings, stand_in=is_file_source, apart=grade_sources.apart(conn, cid)).qrels
    sources = grade_sources.described(conn, cid)
    final: dict[str, dict[str, Any]] = {}
    for (query_id, doc_id), adj in adjudications(conn, collection).items():  # outweighs the consensus
        qrels.setdefault(query_id, {})[doc_id] = adj.grade
        final.setdefault(query_id, {})[doc_id] = {"grade": adj.grade, "by": adj.by, "note": adj.note, "at": adj.at}
    stale: dict[str, set[str]] = {}
    for sj in versions.stale_judgments(conn, cid) if mark_stale else ():
        stale.setdefault(sj.query_id, set()).add(sj.doc_id)
    history = _history(conn, cid)
    machine = machine_grades.by_question(conn, cid) if with_machine else {}
    out = []
    for q in questions:
        grades = qrels.get(q.query_id, {})
        if complete_only and not status_of(q.unanswerable, grades).complete:
            continue
        golden = q.to_golden(grades, tuple(people.get(q.query_id, ())), coll.corpus_fingerprint)
        extra = dict(golden.extra)
        by_annotator = given.get(q.query_id, {})
        if by_annotator:
            extra[ANNOTATIONS] = {a: {d: ratings[q.query_id, d][a] for d in sorted(docs)}
                                  for a, docs in sorted(by_annotator.items())}
            latest: dict[str, tuple[str, str]] = {}
            for docs in by_annotator.values():  # the latest grade's content stands for the document
                for d, (at, h) in docs.items():
                    if h is not None and (d not in latest or at >= latest[d][0]):
                        latest[d] = (at, h)
            if latest:
                extra[DOC_HASHES_FIELD] = {d: latest[d][1] for d in sorted(latest) if d in grades}
            other = {a: {d: h for d, (_, h) in sorted(docs.items()) if h != latest.get(d, ("", None))[1]}
                     for a, docs in sorted(by_annotator.items())}
            if other := {a: docs for a, docs in other.items() if docs}:
                extra[ANNOTATION_HASHES] = other
            if said := notes.get(q.query_id):
                extra[ANNOTATION_NOTES] = {a: dict(sorted(n.items())) for a, n in sorted(said.items())}
        if said := final.get(q.query_id):  # DESIGN: optional `adjudicated`
            extra[ADJUDICATED] = said
        if mark_stale and stale.get(q.query_id):
            extra["stale_docs"] = sorted(stale[q.query_id])
        if voters := voted.get(q.query_id):  # each one's own judgment (DESIGN: optional `unanswerable_votes`)
            said = {a: False for a in people.get(q.query_id, ())} | dict.fromkeys(voters, True)
            extra[VOTES] = dict(sorted(said.items()))
        if replaced := history.get(q.query_id):
            extra[HISTORY] = replaced
        if used := sorted(n for n in {*by_annotator, *voted.get(q.query_id, ())} if n in sources):
            extra[grade_sources.GRADE_SOURCES] = {n: sources[n] for n in used}
        if graded := machine.get(q.query_id):
            extra[machine_grades.MACHINE_FIELD] = graded
        out.append(replace(golden, extra=extra))
    return GoldenSet(tuple(out))


def _history(conn: Connection, cid: int) -> dict[str, list[dict[str, Any]]]:
    """query_id -> the grades later writes replaced or cleared, in the order they were kept."""
    h, q = S.judgment_history, S.questions
    out: dict[str, list[dict[str, Any]]] = {}
    for r in conn.execute(sa.select(h, q.c.query_id).join(q, q.c.id == h.c.question_id)
                          .where(q.c.collection_id == cid).order_by(h.c.id)):
        out.setdefault(r.query_id, []).append({k: getattr(r, k) for k in HISTORY_KEYS})
    return out


def check_importable(golden: GoldenSet) -> None:
    """Refuse a golden set the database cannot hold as given: bad ids, grades, unanswerable conflicts."""
    for g in golden.queries:
        check_id(g.query_id, "query id")
        for doc_id, grade in g.relevance.items():
            check_id(doc_id, f"doc id of question {g.query_id!r}")
            check_stored_grade(grade, f"question {g.query_id!r}, document {doc_id!r}")
        check_full_fields(g)
        machine_grades.check_machine_field(g)
    conflicts = [q.query_id for q in golden.queries if q.unanswerable and any(g >= 1 for g in q.relevance.values())]
    if conflicts:
        raise InputError(f"questions marked unanswerable but with relevant documents: {', '.join(conflicts[:5])}",
                         hint="validate the golden set with read_golden / parse_golden_jsonl first.")


ON_CONFLICT = ("new", "skip", "replace")  # import a conflicting question under a fresh id, leave it, or replace it


def plan(conn: Connection, golden: GoldenSet, *, collection: str) -> ImportPlan:
    """What importing `golden` into the collection would do (reads only)."""
    check_importable(golden)
    row = collection_row(conn, collection)
    return plan_import(conn, golden, row.id if row is not None else None, collection)


def import_golden(conn: Connection, golden: GoldenSet, *, collection: str, corpus_path: str | None,
                  corpus_fingerprint: str | None, progress: Callable[[int, int], None] | None,
                  by: str = "", corpus: Corpus | None = None, on_conflict: str | None = None,
                  file_name: str = "", count_file_grades: bool = True, new_version: bool = False) -> ImportSummary:
    """Add the file's new questions; leave identical ones; a conflicting one (same id, another state:
    labeler_storage.import_plan) is added under a fresh id (`on_conflict="new"`, the file's id kept as
    `source_id`), skipped, or replaced ("replace": its old text and grades go to the history). With
    conflicts and no `on_conflict`, an ImportConflictError and nothing written. One transaction: the caller's.

    Each grade keeps its document's content hash: the file's (`annotation_hashes`, `doc_hashes`),
    else the hash of the document in `corpus` (when given and holding it). Grades and votes of no
    annotator (a consensus-only file's) become one new grade source named by `file_name` and now,
    counted in the consensus (where no person graded the document) if `count_file_grades`. `new_version`: the
    caller recorded a new corpus version in this transaction, a change even where nothing else is written."""
    check_importable(golden)
    if on_conflict is not None and on_conflict not in ON_CONFLICT:
        raise InputError(f"unknown choice for conflicting questions: {on_conflict!r}",
                         hint=f"choose one of {', '.join(ON_CONFLICT)}.")
    cid = collection_id(conn, collection, create=True)
    found = plan_import(conn, golden, cid, collection)
    if found.conflicts and on_conflict is None:
        raise ImportConflictError(f"nothing imported: {found.line}",
                                  hint="choose what to do with the conflicting questions: import them as new "
                                       "questions (fresh ids), skip them, or replace them (admins; the replaced "
                                       "text and grades are kept in the history).")
    corpus_changed = record_corpus(conn, cid, corpus_path, corpus_fingerprint)
    by_id = {g.query_id: g for g in golden.queries}
    conflicting = [by_id[c.query_id] for c in found.conflicts]
    inserts = [by_id[qid] for qid in found.new]
    renamed = []
    if on_conflict == "new":
        fresh = free_ids(conn, cid, len(conflicting), taken=by_id)
        renamed = [replace(g, query_id=qid, extra={**g.extra, "source_id": g.query_id})
                   for g, qid in zip(conflicting, fresh)]
    replaced = conflicting if on_conflict == "replace" else []
    replacing = {g.query_id for g in replaced}
    now = now_iso(conn)
    q = S.questions
    row_ids = {}
    if replaced:
        row_ids = {r.query_id: r.id for r in conn.execute(sa.select(q.c.query_id, q.c.id).where(
            q.c.collection_id == cid, q.c.query_id.in_([g.query_id for g in replaced])))}
        _clear_for_replace(conn, row_ids, now=now, by=by)
    todo = [*inserts, *renamed, *replaced]
    done = n_judgments = 0
    voice = _Voice(cid, file_name, count_file_grades, by)
    for batch in chunks(todo):
        new = [g for g in batch if g.query_id not in row_ids]
        if new:
            conn.execute(q.insert(), [dict(collection_id=cid, query_id=g.query_id, author="", **_row_values(g, now))
                                      for g in new])
            row_ids.update({r.query_id: r.id for r in conn.execute(sa.select(q.c.query_id, q.c.id).where(
                q.c.collection_id == cid, q.c.query_id.in_([g.query_id for g in new])))})
        for g in batch:
            if g.query_id in replacing:
                old = conn.execute(sa.select(q.c.extra).where(q.c.id == row_ids[g.query_id])).scalar_one() or {}
                values = _row_values(g, now)
                values["extra"] = {**values["extra"], REPLACED_FIELD: [*old.get(REPLACED_FIELD, ()),
                                                                       *_replaced_version(conn, row_ids[g.query_id], now, by)]}
                conn.execute(q.update().where(q.c.id == row_ids[g.query_id]).values(**values))
        n_judgments += _write_state(conn, batch, row_ids, now=now, by=by, corpus=corpus, voice=voice)
        done += len(batch)
        if progress is not None:
            progress(done, len(todo))
    machine = machine_grades.import_golden_grades(conn, cid, [*todo, *(by_id[qid] for qid in found.identical)])
    if todo or machine or corpus_changed or new_version:  # every question identical (or skipped): nothing touched
        bump_revision(conn, cid, None)  # last: every question, the ones just inserted too, is touched
    return ImportSummary(collection, len(golden.queries), len(inserts) + len(renamed), len(replaced), n_judgments,
                         sum(1 for g in todo if g.unanswerable), len(found.identical),
                         len(conflicting) if on_conflict == "skip" else 0, len(renamed), voice.name or "",
                         count_file_grades)


class _Voice:
    """The grade source a consensus-only file's grades become: recorded the first time one is written."""

    def __init__(self, cid: int, file_name: str, counted: bool, by: str) -> None:
        self.cid, self.file_name, self.counted, self.by = cid, file_name, counted, by
        self.name: str | None = None

    def named(self, conn: Connection, annotator: str) -> str:
        """The stored name of `annotator` (FILE_VOICE: this import's new source)."""
        if annotator != FILE_VOICE:
            return annotator
        if self.name is None:
            self.name = grade_sources.new_source(conn, self.cid, self.file_name, counted=self.counted, by=self.by)
        return self.name


# Written by export from the database (grades, votes, adjudications, hashes, history, stale marks),
# so not kept as unknown fields.
DERIVED_FIELDS = (DOC_HASHES_FIELD, "stale_docs", ANNOTATIONS, VOTES, ADJUDICATED, ANNOTATION_HASHES,
                  ANNOTATION_NOTES, HISTORY, machine_grades.MACHINE_FIELD, grade_sources.GRADE_SOURCES)
REPLACED_FIELD = "replaced_versions"  # what a replacing import replaced: the old text, type, notes, when and by whom


def _row_values(g: GoldenQuery, now: str) -> dict[str, Any]:
    return dict(text=g.question, query_type=g.query_type, unanswerable=bool(g.unanswerable),
                notes=g.notes, created_at=g.created_at or now, updated_at=g.updated_at or now,
                extra={k: v for k, v in g.extra.items() if k not in DERIVED_FIELDS},
                credited_annotators=list(g.annotators), corpus_fingerprint=g.corpus_fingerprint)


def _replaced_version(conn: Connection, rid: int, now: str, by: str) -> list[dict[str, Any]]:
    q = S.questions
    r = conn.execute(sa.select(q.c.text, q.c.query_type, q.c.notes).where(q.c.id == rid)).one()
    return [{"text": r.text, "query_type": r.query_type, "notes": r.notes, "replaced_at": now, "replaced_by": by}]


def _clear_for_replace(conn: Connection, row_ids: dict[str, int], *, now: str, by: str) -> None:
    """Move the grades of questions about to be replaced into the history; drop their votes and adjudications."""
    j, v, a = S.judgments, S.unanswerable_votes, S.adjudications
    ids = list(row_ids.values())
    for some in chunks(ids):
        old = conn.execute(sa.select(j.c.question_id, j.c.doc_id, j.c.annotator).where(j.c.question_id.in_(some)))
        keep_history(conn, [dict(question_id=r.question_id, doc_id=r.doc_id, annotator=r.annotator, updated_at=now)
                            for r in old], change="import", by=by)
        for t in (j, v, a):
            conn.execute(t.delete().where(t.c.question_id.in_(some)))


def _write_state(conn: Connection, batch: list[GoldenQuery], row_ids: dict[str, int], *, now: str, by: str,
                 corpus: Corpus | None, voice: _Voice) -> int:
    """Write each question's grades, votes, adjudications and kept history as the file gives them; the grades written."""
    rows, vote_rows, adj_rows, history_rows = [], [], [], []
    for g in batch:
        rid = row_ids[g.query_id]
        given_hashes = g.extra.get(ANNOTATION_HASHES) or {}
        given_notes = g.extra.get(ANNOTATION_NOTES) or {}
        earlier = min(g.created_at or now, now)
        grades_of, voters = file_grades(g), file_voters(g)
        grade_sources.adopt_sources(conn, voice.cid, {*grades_of, *voters} - {FILE_VOICE},
                                   g.extra.get(grade_sources.GRADE_SOURCES) or {})
        for annotator, grades in grades_of.items():
            named = voice.named(conn, annotator)
            for doc_id, grade in grades.items():
                own = given_hashes.get(annotator, {})
                doc_hash = own[doc_id] if doc_id in own else _doc_hash(g, doc_id, corpus)
                # A grade given against other content than the document's latest grade was the earlier one.
                at = earlier if doc_id in own else now
                note = given_notes.get(annotator, {}).get(doc_id, "")
                rows.append(dict(question_id=rid, doc_id=doc_id, grade=grade, annotator=named, note=note,
                                 created_at=at, updated_at=at, doc_hash=doc_hash))
        vote_rows += [dict(question_id=rid, annotator=voice.named(conn, a), created_at=now) for a in sorted(voters)]
        adj_rows += [dict(question_id=rid, doc_id=d, grade=x["grade"], by=x.get("by", ""), note=x.get("note", ""),
                          at=x.get("at") or now) for d, x in file_adjudicated(g).items()]
        history_rows += [dict(question_id=rid, **{k: e.get(k, "" if k == "note" else None) for k in HISTORY_KEYS})
                         for e in g.extra.get(HISTORY) or ()]
    if corpus is not None:  # what the judges saw, where the corpus at hand is that content
        versions.keep_texts(conn, {d.content_hash: d for r in rows if (d := corpus.get(r["doc_id"])) is not None
                                   and d.content_hash == r["doc_hash"]}.values())
    write_judgments(conn, rows, by=by)
    for table, values in ((S.unanswerable_votes, vote_rows), (S.adjudications, adj_rows),
                          (S.judgment_history, history_rows)):
        if values:
            conn.execute(table.insert(), values)
    votes.refresh_unanswerable(conn, [row_ids[g.query_id] for g in batch])
    return len(rows)


def _doc_hash(g: GoldenQuery, doc_id: str, corpus: Corpus | None) -> str | None:
    given = g.extra.get(DOC_HASHES_FIELD)
    if isinstance(given, dict) and isinstance(given.get(doc_id), str):
        return given[doc_id]
    doc = corpus.get(doc_id) if corpus is not None else None
    return doc.content_hash if doc is not None else None
