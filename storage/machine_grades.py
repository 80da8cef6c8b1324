"""Machine grades and saved judges, kept apart from people's judgments (issue 23, item 2).

A machine grade is never a judgment: it has its own table (`machine_grades`), never enters the
consensus, `relevance` or the question index, and an export writes it only when asked, under its
own field (MACHINE_FIELD) with its provenance. Each row says what made it: the judge's name, the
model, the prompt's hash, the parameters, the raw answer and the rationale, when, and the content
hash of the document it graded. A pair is graded once per (judge, prompt hash, content): saving
the same again is a no-op (ON CONFLICT DO NOTHING), so an interrupted `labeler judge` resumes
without grading a pair twice. Stale as for judgments (labeler_storage.versions): once the collection has
a corpus version, a grade whose content hash is not its document's current one (edited, deleted,
or graded against unknown content, "") is stale, and calibration and evaluation leave it out
(labeler_app.judge_runs.machine_pairs).

`judges`: judges saved by name, the declaration as data (labeler.judges.spec checks it before the
app saves it: secrets appear in it only as environment-variable references).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError
from labeler_storage import schema as S
from labeler_storage.checks import chunks
from labeler_storage.clock import now_iso

MACHINE_FIELD = "machine_grades"  # a golden JSONL question's machine grades (export --with-machine)
GRADE_KEYS = ("doc_id", "grade", "judge", "model", "prompt_hash", "params", "doc_hash", "raw", "rationale", "at")


@dataclass(frozen=True)
class StoredMachineGrade:
    """One machine grade as stored (the fields of labeler.judges.base.MachineGrade) and whether it is stale."""

    query_id: str
    doc_id: str
    grade: int
    judge: str
    model: str = ""
    prompt_hash: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    doc_hash: str = ""
    raw: str = ""
    rationale: str | None = None
    at: str = ""
    stale: bool = False

    def to_json(self) -> dict[str, Any]:
        """The export's form (MACHINE_FIELD entries): every field but the question id and staleness."""
        return {k: (dict(self.params) if k == "params" else getattr(self, k)) for k in GRADE_KEYS}


@dataclass(frozen=True)
class JudgeCount:
    """How many machine grades one judge holds in a collection, and how many of them are stale."""

    judge: str
    grades: int
    stale: int
    questions: int

    @property
    def current(self) -> int:
        return self.grades - self.stale


def check_grade(grade: Any, where: str) -> int:
    """A machine grade is 0, 1, 2 or 3 (a judge's answer outside that is a failure, never stored)."""
    if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
        raise InputError(f"{where}: machine grade {grade!r} is not 0, 1, 2 or 3",
                         hint="a judge grades on the 0-3 scale; fix the file or the judge's answer.")
    return grade


def _row(rid: int, g: Any, now: str = "") -> dict[str, Any]:
    get = (lambda k, d=None: g.get(k, d)) if isinstance(g, Mapping) else (lambda k, d=None: getattr(g, k, d))
    judge = get("judge")
    if not isinstance(judge, str) or not judge.strip():
        raise InputError(f"a machine grade of {get('doc_id')!r} names no judge", hint="every machine grade needs its judge.")
    return dict(question_id=rid, doc_id=str(get("doc_id")), grade=check_grade(get("grade"), f"document {get('doc_id')!r}"),
                judge=judge, model=get("model") or "", prompt_hash=get("prompt_hash") or "",
                params=dict(get("params") or {}), doc_hash=get("doc_hash") or "", raw=get("raw") or "",
                rationale=get("rationale"), at=get("at") or now)


def _question_ids(conn: Connection, cid: int, query_ids: Iterable[str]) -> dict[str, int]:
    q = S.questions
    wanted, out = sorted(set(query_ids)), {}
    for some in chunks(wanted):
        out.update({r.query_id: r.id for r in conn.execute(sa.select(q.c.query_id, q.c.id).where(
            q.c.collection_id == cid, q.c.query_id.in_(some)))})
    return out


def insert_rows(conn: Connection, rows: list[dict[str, Any]]) -> int:
    """Insert machine-grade rows, leaving any (question, doc, judge, prompt, content) already graded; how many were new."""
    added = 0  # counted from RETURNING: PostgreSQL's executemany has no rowcount
    stmt = S.insert_ignore(S.machine_grades, conn.dialect.name).returning(S.machine_grades.c.id)
    for some in chunks(rows):
        added += len(conn.execute(stmt, some).all())
    return added


def save_grades(conn: Connection, cid: int, grades: Iterable[Any]) -> int:
    """Save machine grades (objects or mappings with MachineGrade's fields, `query_id` among them); an
    InputError for a question the collection does not hold. How many were new."""
    grades = list(grades)
    ids = _question_ids(conn, cid, (_get(g, "query_id") for g in grades))
    missing = sorted({_get(g, "query_id") for g in grades} - set(ids))
    if missing:
        raise InputError(f"machine grades for questions the collection does not hold: {', '.join(map(str, missing[:5]))}",
                         hint="grade the collection's own questions (labeler judge reads them from it).")
    now = now_iso(conn)
    return insert_rows(conn, [_row(ids[_get(g, "query_id")], g, now) for g in grades])


def _get(g: Any, key: str) -> Any:
    return g.get(key) if isinstance(g, Mapping) else getattr(g, key)


def grades_query(cid: int) -> sa.Select:
    """SELECT of the collection's machine grades with a `stale` column (labeler_storage.versions' rule)."""
    m, q, d = S.machine_grades, S.questions, S.corpus_docs
    has_version = sa.exists(sa.select(d.c.doc_id).where(d.c.collection_id == cid))
    stale = sa.and_(has_version, sa.or_(d.c.doc_hash.is_(None), m.c.doc_hash != d.c.doc_hash))
    return (sa.select(q.c.query_id, m, sa.case((stale, True), else_=False).label("stale"))
            .join(q, q.c.id == m.c.question_id)
            .outerjoin(d, sa.and_(d.c.collection_id == cid, d.c.doc_id == m.c.doc_id))
            .where(q.c.collection_id == cid)
            .order_by(q.c.id, m.c.doc_id, m.c.judge, m.c.id))


def grades(conn: Connection, cid: int, *, judge: str | None = None, prompt_hash: str | None = None,
           query_id: str | None = None) -> list[StoredMachineGrade]:
    """The collection's machine grades (optionally one judge's, one prompt's, one question's), stale ones marked."""
    stmt = grades_query(cid)
    m = S.machine_grades
    if judge is not None:
        stmt = stmt.where(m.c.judge == judge)
    if prompt_hash is not None:
        stmt = stmt.where(m.c.prompt_hash == prompt_hash)
    if query_id is not None:
        stmt = stmt.where(S.questions.c.query_id == query_id)
    return [StoredMachineGrade(r.query_id, r.doc_id, r.grade, r.judge, r.model, r.prompt_hash, r.params or {},
                               r.doc_hash, r.raw, r.rationale, r.at, bool(r.stale)) for r in conn.execute(stmt)]


def counts(conn: Connection, cid: int) -> list[JudgeCount]:
    """Per judge: machine grades, stale ones, questions graded."""
    per: dict[str, list] = {}
    for g in grades(conn, cid):
        c = per.setdefault(g.judge, [0, 0, set()])
        c[0] += 1
        c[1] += g.stale
        c[2].add(g.query_id)
    return [JudgeCount(j, n, s, len(qs)) for j, (n, s, qs) in sorted(per.items())]


def by_question(conn: Connection, cid: int) -> dict[str, list[dict[str, Any]]]:
    """query_id -> its machine grades in the export's form (MACHINE_FIELD)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for g in grades(conn, cid):
        out.setdefault(g.query_id, []).append(g.to_json())
    return out


def check_machine_field(g: Any) -> None:
    """Refuse a golden question whose MACHINE_FIELD is not a list of machine grades (before anything is written)."""
    entries = g.extra.get(MACHINE_FIELD)
    if entries is None:
        return
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise InputError(f"question {g.query_id!r}: {MACHINE_FIELD} must be a list of machine grades",
                         hint="write it with `labeler export --with-machine`, or leave it out.")
    for e in entries:
        _row(0, e)


def import_golden_grades(conn: Connection, cid: int, questions: Iterable[Any]) -> int:
    """Add the machine grades that imported golden questions carry (MACHINE_FIELD) to the machine-grade
    table, never to the judgments, each under the question's id in the collection; how many were new."""
    questions = [g for g in questions if g.extra.get(MACHINE_FIELD)]
    ids, now = _question_ids(conn, cid, (g.query_id for g in questions)), now_iso(conn)
    return insert_rows(conn, [_row(ids[g.query_id], e, now) for g in questions if g.query_id in ids
                              for e in g.extra[MACHINE_FIELD]])


# ---------------------------------------------------------------------------------------------- judges

def check_judge_name(name: Any) -> str:
    from labeler.ids import id_problem

    problem = id_problem(name, "judge name") if isinstance(name, str) else "a judge name must be text"
    if problem:
        raise InputError(problem, hint="use letters, digits, '-' or '_', e.g. umbrela-gpt4o.")
    return name


def save_judge(conn: Connection, name: str, spec: Mapping[str, Any], *, by: str) -> None:
    """Save (or replace) the judge `name`'s declaration."""
    check_judge_name(name)
    if not isinstance(spec, Mapping):
        raise InputError("a judge declaration must be a table of fields", hint="declare it as TOML or JSON.")
    j, now = S.judges, now_iso(conn)
    if conn.execute(sa.select(j.c.name).where(j.c.name == name)).first() is None:
        conn.execute(j.insert().values(name=name, spec=dict(spec), created_at=now, created_by=by, updated_at=now,
                                       updated_by=by))
    else:
        conn.execute(j.update().where(j.c.name == name).values(spec=dict(spec), updated_at=now, updated_by=by))


def judge_specs(conn: Connection) -> dict[str, dict[str, Any]]:
    """Every saved judge: name -> declaration."""
    return {r.name: r.spec for r in conn.execute(sa.select(S.judges).order_by(S.judges.c.name))}


def delete_judge(conn: Connection, name: str) -> bool:
    return conn.execute(S.judges.delete().where(S.judges.c.name == name)).rowcount > 0
