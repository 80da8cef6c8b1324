"""What an import would do to a collection, decided before anything is written.

A golden file's question is read as a *state*: its text, type and notes, each annotator's grades,
who votes it unanswerable, and its adjudicated grades. A file the app exported carries that state
whole (`annotations`, `unanswerable_votes`, `adjudicated`: DESIGN "Golden JSONL v1, optional
fields"); a consensus-only file from elsewhere is one voice, FILE_VOICE, with the file's `relevance`
as its grades and its `unanswerable` flag as its vote: the grade source it becomes once imported
(labeler_storage.grade_sources), which matches any source already there with exactly those grades.

Each question of the file is then
- new: no question of the collection has its id;
- identical: the stored question has that state already (importing it changes nothing);
- conflicting: same id, and something differs (the text, someone's grades, the votes, the
  adjudications). A conflict is never applied unless the caller chooses how (labeler_storage.golden_io).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError
from labeler.golden import GoldenQuery, GoldenSet
from labeler_storage import schema as S
from labeler_storage.checks import check_id, check_stored_grade, chunks
from labeler_storage.grade_sources import GRADE_SOURCES, check_described
from labeler_storage.records import Conflict, ImportPlan, is_file_source

ANNOTATIONS, VOTES, ADJUDICATED = "annotations", "unanswerable_votes", "adjudicated"
ANNOTATION_HASHES, ANNOTATION_NOTES, HISTORY = "annotation_hashes", "annotation_notes", "grade_history"
HISTORY_KEYS = ("doc_id", "annotator", "grade", "note", "given_at", "replaced_at", "replaced_by", "change",
                "doc_hash")
FILE_VOICE = "(this file)"  # a consensus-only file's grades and vote, until they are written as a new source

@dataclass(frozen=True)
class QuestionState:
    """What an import compares: a question's words, each annotator's grades, its voters, its final grades."""

    text: str
    query_type: str
    notes: str
    grades: Mapping[str, Mapping[str, int]]  # annotator -> doc_id -> grade
    voters: frozenset[str]
    adjudicated: Mapping[str, tuple[int, str, str]]  # doc_id -> (grade, by, note)


def file_grades(g: GoldenQuery) -> dict[str, dict[str, int]]:
    """annotator -> doc_id -> grade as the file gives them: its `annotations`, and FILE_VOICE's grade
    for each `relevance` document that no annotation nor adjudication covers."""
    given = g.extra.get(ANNOTATIONS)
    out = {a: dict(d) for a, d in given.items() if d} if isinstance(given, dict) else {}
    covered = {d for grades in out.values() for d in grades} | set(file_adjudicated(g))
    rest = {d: grade for d, grade in g.relevance.items() if d not in covered}
    if rest:
        out.setdefault(FILE_VOICE, {}).update(rest)
    return out


def file_voters(g: GoldenQuery) -> frozenset[str]:
    """Who votes the question unanswerable: the file's `unanswerable_votes`, else its flag as FILE_VOICE's vote."""
    given = g.extra.get(VOTES)
    if isinstance(given, dict):
        return frozenset(a for a, yes in given.items() if yes is True)
    return frozenset({FILE_VOICE}) if g.unanswerable else frozenset()


def file_adjudicated(g: GoldenQuery) -> dict[str, dict[str, Any]]:
    """doc_id -> {grade, by, note, at} from the file's `adjudicated` ({} without one)."""
    given = g.extra.get(ADJUDICATED)
    return {d: dict(a) for d, a in given.items()} if isinstance(given, dict) else {}


def file_state(g: GoldenQuery) -> QuestionState:
    """The state a question of the file would have once imported."""
    return QuestionState(g.question, g.query_type, g.notes, file_grades(g), file_voters(g),
                         {d: (a["grade"], a.get("by", ""), a.get("note", "")) for d, a in file_adjudicated(g).items()})


def check_full_fields(g: GoldenQuery) -> None:
    """Refuse malformed optional fields (annotations, votes, adjudications, their hashes, history)."""
    where = f"question {g.query_id!r}"

    def need(ok: bool, field: str, shape: str) -> None:
        if not ok:
            raise InputError(f"{where}: `{field}` must be {shape}",
                             hint="export the golden set from the app again, or drop that field from the line.")

    ann = g.extra.get(ANNOTATIONS)
    if ann is not None:
        need(isinstance(ann, dict) and all(isinstance(a, str) and a.strip() and isinstance(d, dict)
                                           for a, d in ann.items()), ANNOTATIONS, "{annotator: {doc_id: grade}}")
        for a, grades in ann.items():
            for doc_id, grade in grades.items():
                check_id(doc_id, f"doc id of {where}")
                check_stored_grade(grade, f"{where}, annotator {a!r}, document {doc_id!r}")
    votes = g.extra.get(VOTES)
    need(votes is None or isinstance(votes, dict) and all(isinstance(v, bool) for v in votes.values()),
         VOTES, "{annotator: true or false}")
    adj = g.extra.get(ADJUDICATED)
    need(adj is None or isinstance(adj, dict) and all(
        isinstance(a, dict) and isinstance(a.get("by", ""), str) and isinstance(a.get("note", ""), str)
        and isinstance(a.get("at", ""), str) for a in adj.values()), ADJUDICATED, "{doc_id: {grade, by, note}}")
    for doc_id, a in (adj or {}).items():
        check_id(doc_id, f"adjudicated doc id of {where}")
        check_stored_grade(a.get("grade"), f"{where}, adjudication of {doc_id!r}")
    hashes = g.extra.get(ANNOTATION_HASHES)
    need(hashes is None or isinstance(hashes, dict) and all(isinstance(d, dict) for d in hashes.values()),
         ANNOTATION_HASHES, "{annotator: {doc_id: hash or null}}")
    said = g.extra.get(ANNOTATION_NOTES)
    need(said is None or isinstance(said, dict) and all(
        isinstance(d, dict) and all(isinstance(n, str) for n in d.values()) for d in said.values()),
        ANNOTATION_NOTES, "{annotator: {doc_id: note}}")
    history = g.extra.get(HISTORY)
    need(history is None or isinstance(history, list) and all(
        isinstance(e, dict) and isinstance(e.get("grade"), int) and all(
            isinstance(e.get(k), str) for k in HISTORY_KEYS if k not in ("grade", "doc_hash", "note"))
        for e in history), HISTORY, "a list of {doc_id, annotator, grade, given_at, replaced_at, replaced_by, change}")
    check_described(g.extra.get(GRADE_SOURCES), where)


def stored_states(conn: Connection, question_ids: Mapping[str, int]) -> dict[str, QuestionState]:
    """query_id -> the stored state of each given question (query_id -> row id)."""
    q, j, v, a = S.questions, S.judgments, S.unanswerable_votes, S.adjudications
    by_row = {rid: qid for qid, rid in question_ids.items()}
    words: dict[int, tuple[str, str, str]] = {}
    grades: dict[int, dict[str, dict[str, int]]] = {}
    voters: dict[int, set[str]] = {}
    final: dict[int, dict[str, tuple[int, str, str]]] = {}
    for some in chunks(list(by_row)):
        for r in conn.execute(sa.select(q.c.id, q.c.text, q.c.query_type, q.c.notes).where(q.c.id.in_(some))):
            words[r.id] = (r.text, r.query_type, r.notes)
        for r in conn.execute(sa.select(j.c.question_id, j.c.annotator, j.c.doc_id, j.c.grade)
                              .where(j.c.question_id.in_(some))):
            grades.setdefault(r.question_id, {}).setdefault(r.annotator, {})[r.doc_id] = r.grade
        for r in conn.execute(sa.select(v.c.question_id, v.c.annotator).where(v.c.question_id.in_(some))):
            voters.setdefault(r.question_id, set()).add(r.annotator)
        for r in conn.execute(sa.select(a.c.question_id, a.c.doc_id, a.c.grade, a.c.by, a.c.note)
                              .where(a.c.question_id.in_(some))):
            final.setdefault(r.question_id, {})[r.doc_id] = (r.grade, r.by, r.note)
    return {qid: QuestionState(*words[rid], grades.get(rid, {}), frozenset(voters.get(rid, ())), final.get(rid, {}))
            for rid, qid in by_row.items()}


def _as_stored_source(stored: QuestionState, incoming: QuestionState) -> QuestionState:
    """`incoming` with FILE_VOICE named as the stored source that has exactly its grades and vote, if one does
    (a consensus-only file imported again is identical, not a conflict)."""
    mine, voting = incoming.grades.get(FILE_VOICE, {}), FILE_VOICE in incoming.voters
    if not mine and not voting:
        return incoming
    for name in sorted(a for a in {*stored.grades, *stored.voters} if is_file_source(a)):
        if stored.grades.get(name, {}) == mine and (name in stored.voters) == voting:
            grades = {(name if a == FILE_VOICE else a): d for a, d in incoming.grades.items()}
            voters = frozenset(name if a == FILE_VOICE else a for a in incoming.voters)
            return QuestionState(incoming.text, incoming.query_type, incoming.notes, grades, voters,
                                 incoming.adjudicated)
    return incoming


def differences(stored: QuestionState, incoming: QuestionState) -> tuple[str, ...]:
    """Why importing `incoming` over `stored` would change the question (empty: identical)."""
    incoming = _as_stored_source(stored, incoming)
    why = []
    if stored.text != incoming.text:
        why.append("other text")
    if (stored.query_type, stored.notes) != (incoming.query_type, incoming.notes):
        why.append("other type or notes")
    changed = sorted(a for a in set(stored.grades) | set(incoming.grades)
                     if stored.grades.get(a, {}) != incoming.grades.get(a, {}))
    people = [a for a in changed if not is_file_source(a)]
    if people:
        why.append(f"grades by {', '.join(people[:3])}{' and more' if len(people) > 3 else ''} differ")
    if any(is_file_source(a) for a in changed):
        why.append("other imported grades")
    if stored.voters != incoming.voters:
        why.append("other unanswerable votes")
    if stored.adjudicated != incoming.adjudicated:
        why.append("other adjudications")
    return tuple(why)


def _counting_differs(g: GoldenQuery, counted: Mapping[str, bool]) -> bool:
    """True when the file says one of the collection's sources is counted and the collection does not, or back."""
    said = g.extra.get(GRADE_SOURCES) or {}
    return any(name in counted and d.get("counted", True) is not counted[name] for name, d in said.items())


def plan_import(conn: Connection, golden: GoldenSet, cid: int | None, collection: str) -> ImportPlan:
    """Classify each question of the file against the collection (`cid` None: it does not exist yet)."""
    q = S.questions
    existing = {} if cid is None else {
        r.query_id: r.id for r in conn.execute(sa.select(q.c.query_id, q.c.id).where(q.c.collection_id == cid))}
    present = {g.query_id: existing[g.query_id] for g in golden.queries if g.query_id in existing}
    stored = stored_states(conn, present)
    gs = S.grade_sources
    counted = {} if cid is None else {r.name: bool(r.counted) for r in conn.execute(
        sa.select(gs.c.name, gs.c.counted).where(gs.c.collection_id == cid))}
    new, identical, conflicts = [], [], []
    for g in golden.queries:
        if g.query_id not in present:
            new.append(g.query_id)
        elif why := differences(stored[g.query_id], file_state(g)) + (
                ("other counting of imported grades",) if _counting_differs(g, counted) else ()):
            conflicts.append(Conflict(g.query_id, why, stored[g.query_id].text, g.question))
        else:
            identical.append(g.query_id)
    mine = sum(len(file_grades(g).get(FILE_VOICE, ())) for g in golden.queries)
    return ImportPlan(collection, tuple(new), tuple(identical), tuple(conflicts), mine)
