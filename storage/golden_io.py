"""Golden sets in and out of the database, inside the caller's transaction.

Import: a golden file's grades are stored as the judgments of the pseudo-annotator
IMPORT_ANNOTATOR (the file holds a consensus, not any one person's grades); the annotators the
file names are kept as the question's credited annotators and written back on export.
Re-importing replaces the imported grades of the questions in the file, keeps the grades
people gave in the app, and keeps questions the file does not mention.
Export: consensus grades (the pseudo-annotator's grades count, as one voice among the people).
"Unanswerable" likewise: the file's flag is the pseudo-annotator's vote (storage.votes); an export
of a question people voted on carries each one's vote as `unanswerable_votes`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.agreement import consensus
from labeler.corpus import Corpus
from labeler.corpus_versions import DOC_HASHES_FIELD
from labeler.errors import InputError
from labeler.golden import GoldenQuery, GoldenSet
from labeler.status import status_of
from storage import schema as S
from storage.collection import bump_revision, collection_id, collection_row, record_corpus
from storage.questions import (
    check_id, check_stored_grade, chunks, judgment_rows, keep_history, question_query, to_question, write_judgments,
)
from storage import versions, votes
from storage.adjudication import adjudications
from storage.records import IMPORT_ANNOTATOR, ImportSummary
from storage.schema import utc_now


def export_golden(conn: Connection, *, collection: str, complete_only: bool, mark_stale: bool = False) -> GoldenSet:
    """The collection's golden set with consensus grades (complete_only: done or unanswerable only),
    each judged document's content hash (`doc_hashes`) and, with `mark_stale`, the documents whose
    judgments are stale against the current corpus version (`stale_docs`)."""
    coll = collection_row(conn, collection)
    cid = collection_id(conn, collection)
    rows = conn.execute(question_query().where(S.questions.c.collection_id == cid).order_by(S.questions.c.id)).all()
    questions = [to_question(r) for r in rows]
    by_id = votes.votes_by_question(conn, [r.id for r in rows])
    voted = {r.query_id: by_id[r.id] for r in rows if r.id in by_id}
    ratings: dict[tuple[str, str], dict[str, int]] = {}
    people: dict[str, set[str]] = {}
    hashes: dict[str, dict[str, tuple[str, str]]] = {}
    for j in judgment_rows(conn, cid):
        ratings.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.grade
        if j.doc_hash is not None:  # the latest grade's content stands for the document
            seen = hashes.setdefault(j.query_id, {}).get(j.doc_id)
            if seen is None or j.updated_at >= seen[0]:
                hashes[j.query_id][j.doc_id] = (j.updated_at, j.doc_hash)
        if j.annotator != IMPORT_ANNOTATOR:
            people.setdefault(j.query_id, set()).add(j.annotator)
    qrels = consensus(ratings).qrels
    final: dict[str, dict[str, Any]] = {}
    for (query_id, doc_id), adj in adjudications(conn, collection).items():  # outweighs the consensus
        qrels.setdefault(query_id, {})[doc_id] = adj.grade
        final.setdefault(query_id, {})[doc_id] = {"grade": adj.grade, "by": adj.by, "note": adj.note}
    stale: dict[str, set[str]] = {}
    for sj in versions.stale_judgments(conn, cid) if mark_stale else ():
        stale.setdefault(sj.query_id, set()).add(sj.doc_id)
    out = []
    for q in questions:
        grades = qrels.get(q.query_id, {})
        if complete_only and not status_of(q.unanswerable, grades).complete:
            continue
        golden = q.to_golden(grades, tuple(people.get(q.query_id, ())), coll.corpus_fingerprint)
        if known := hashes.get(q.query_id):
            golden = replace(golden, extra={**golden.extra, DOC_HASHES_FIELD: {
                d: known[d][1] for d in sorted(known) if d in grades}})
        if said := final.get(q.query_id):  # DESIGN: optional `adjudicated`
            golden = replace(golden, extra={**golden.extra, "adjudicated": said})
        if mark_stale and stale.get(q.query_id):
            golden = replace(golden, extra={**golden.extra, "stale_docs": sorted(stale[q.query_id])})
        local = [a for a in voted.get(q.query_id, ()) if a != IMPORT_ANNOTATOR]
        if local:  # each person's own judgment (DESIGN: optional `unanswerable_votes`; v1 readers keep it)
            said = {a: False for a in people.get(q.query_id, ())} | dict.fromkeys(local, True)
            golden = replace(golden, extra={**golden.extra, "unanswerable_votes": dict(sorted(said.items()))})
        out.append(golden)
    return GoldenSet(tuple(out))



def check_importable(golden: GoldenSet) -> None:
    """Refuse a golden set the database cannot hold as given: bad ids, grades, unanswerable conflicts."""
    for g in golden.queries:
        check_id(g.query_id, "query id")
        for doc_id, grade in g.relevance.items():
            check_id(doc_id, f"doc id of question {g.query_id!r}")
            check_stored_grade(grade, f"question {g.query_id!r}, document {doc_id!r}")
    conflicts = [q.query_id for q in golden.queries if q.unanswerable and any(g >= 1 for g in q.relevance.values())]
    if conflicts:
        raise InputError(f"questions marked unanswerable but with relevant documents: {', '.join(conflicts[:5])}",
                         hint="validate the golden set with read_golden / parse_golden_jsonl first.")


def import_golden(conn: Connection, golden: GoldenSet, *, collection: str, corpus_path: str | None,
                  corpus_fingerprint: str | None, progress: Callable[[int, int], None] | None,
                  by: str = "", corpus: Corpus | None = None) -> ImportSummary:
    """Create or update the file's questions and replace their imported grades (one transaction: the caller's).

    Each imported grade keeps its document's content hash: the file's `doc_hashes`, else the hash
    of the document in `corpus` (when given and holding it)."""
    check_importable(golden)
    total = len(golden.queries)
    now = utc_now()
    cid = collection_id(conn, collection, create=True)
    record_corpus(conn, cid, corpus_path, corpus_fingerprint)
    q = S.questions
    existing = {r.query_id: r.id for r in conn.execute(sa.select(q.c.query_id, q.c.id).where(q.c.collection_id == cid))}

    def row_values(g: GoldenQuery) -> dict[str, Any]:
        return dict(text=g.question, query_type=g.query_type, unanswerable=bool(g.unanswerable),
                    notes=g.notes, created_at=g.created_at or now, updated_at=g.updated_at or now,
                    extra={k: v for k, v in g.extra.items() if k not in DERIVED_FIELDS},
                    credited_annotators=list(g.annotators),
                    corpus_fingerprint=g.corpus_fingerprint)

    done = n_new = n_judgments = 0
    for batch in chunks(list(golden.queries)):
        new = [g for g in batch if g.query_id not in existing]
        old = [g for g in batch if g.query_id in existing]
        if new:
            conn.execute(q.insert(), [dict(collection_id=cid, query_id=g.query_id, author="", **row_values(g))
                                      for g in new])
            ids = conn.execute(sa.select(q.c.query_id, q.c.id).where(
                q.c.collection_id == cid, q.c.query_id.in_([g.query_id for g in new])))
            existing.update({r.query_id: r.id for r in ids})
            n_new += len(new)
        if old:
            conn.execute(q.update().where(q.c.id == sa.bindparam("qid")),
                         [dict(qid=existing[g.query_id], **row_values(g)) for g in old])
            old_ids = [existing[g.query_id] for g in old]
            # The file's grades replace the earlier imported ones; those it changes or drops are kept in the history.
            j = S.judgments
            incoming = {(existing[g.query_id], d): grade for g in old for d, grade in g.relevance.items()}
            replaced = conn.execute(sa.select(j.c.question_id, j.c.doc_id, j.c.annotator, j.c.grade)
                                    .where(j.c.annotator == IMPORT_ANNOTATOR, j.c.question_id.in_(old_ids)))
            keep_history(conn, [dict(question_id=r.question_id, doc_id=r.doc_id, annotator=r.annotator,
                                     updated_at=now)  # replaced when the file's grades are given
                                for r in replaced if incoming.get((r.question_id, r.doc_id)) != r.grade],
                         change="import", by=by)
            conn.execute(j.delete().where(j.c.annotator == IMPORT_ANNOTATOR, j.c.question_id.in_(old_ids)))
        rows = [dict(question_id=existing[g.query_id], doc_id=doc_id, grade=grade, annotator=IMPORT_ANNOTATOR,
                     note="", created_at=now, updated_at=now, doc_hash=_doc_hash(g, doc_id, corpus))
                for g in batch for doc_id, grade in g.relevance.items()]
        if corpus is not None:  # what the judges saw, where the corpus at hand is that content
            versions.keep_texts(conn, {d.content_hash: d for r in rows if (d := corpus.get(r["doc_id"])) is not None
                                       and d.content_hash == r["doc_hash"]}.values())
        write_judgments(conn, rows, by=by)
        # The file's flag is one voice; with the annotators' own votes and grades here it makes the consensus.
        votes.replace_import_votes(conn, {existing[g.query_id]: bool(g.unanswerable) for g in batch})
        votes.refresh_unanswerable(conn, [existing[g.query_id] for g in batch])
        n_judgments += len(rows)
        done += len(batch)
        if progress is not None:
            progress(done, total)
    bump_revision(conn, cid, None)  # last: every question, the ones just inserted too, is touched
    return ImportSummary(collection, total, n_new, total - n_new, n_judgments,
                         sum(1 for g in golden.queries if g.unanswerable))


# Written by export from the database (judgments' hashes, stale marks), so not kept as unknown fields.
DERIVED_FIELDS = (DOC_HASHES_FIELD, "stale_docs")


def _doc_hash(g: GoldenQuery, doc_id: str, corpus: Corpus | None) -> str | None:
    given = g.extra.get(DOC_HASHES_FIELD)
    if isinstance(given, dict) and isinstance(given.get(doc_id), str):
        return given[doc_id]
    doc = corpus.get(doc_id) if corpus is not None else None
    return doc.content_hash if doc is not None else None
