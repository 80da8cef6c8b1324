"""Grade sources: the grades each consensus-only file brought, kept as that file's.

A golden file with no `annotations` (one made elsewhere) gives one grade per document and no
annotator. Its grades are stored as judgments under the source's own name, which starts with "("
(`(golden.jsonl, 2026-12-02T05:50:00Z)`: the file and when it was imported), so two files are two
sources, shown apart from people's grades and from each other. A source counts in the consensus
only while `counted`, and then only for a document no person graded (labeler.agreement.counted);
an uncounted source's grades and votes count nowhere: not in the consensus, the status, the export's
`relevance`, nor any metric. The choice is made at import, switched later (each switch is kept in
`changes`), and exported with the source (GRADE_SOURCES), so an export imports back exactly.

Databases from before sources (v17) kept every such file's grades under the one name "(import)":
that is one source, counted, as before.
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import InputError
from labeler_storage import schema as S
from labeler_storage.checks import chunks
from labeler_storage.clock import now_iso
from labeler_storage.collection import bump_revision, collection_id
from labeler_storage.records import GradeSource, is_file_source

GRADE_SOURCES = "grade_sources"  # the export's field: {name: {file, imported_at, imported_by, counted, changes}}


def new_source(conn: Connection, cid: int, file_name: str, *, counted: bool, by: str) -> str:
    """Record a source for the grades of the file `file_name` imported now; its name (unique in the collection)."""
    now = now_iso(conn)
    base = f"({file_name or 'unnamed file'}, {now})"
    taken = set(conn.execute(sa.select(S.grade_sources.c.name).where(
        S.grade_sources.c.collection_id == cid, S.grade_sources.c.name.startswith(base[:-1]))).scalars())
    name = next(n for i in range(1, len(taken) + 2) if (n := base if i == 1 else f"{base[:-1]} #{i})") not in taken)
    conn.execute(S.grade_sources.insert().values(collection_id=cid, name=name, file_name=file_name, imported_at=now,
                                                 imported_by=by, counted=counted, changes=[]))
    return name


def adopt_sources(conn: Connection, cid: int, names: Iterable[str], described: Mapping[str, Any]) -> None:
    """Record the sources an imported file names (in its `annotations` or votes) that the collection
    lacks, as the file describes them (GRADE_SOURCES); one it does not describe is counted, as
    "(import)" always was. A source the collection has already is left as it is."""
    wanted = {n for n in names if is_file_source(n)}
    if not wanted:
        return
    have = set(conn.execute(sa.select(S.grade_sources.c.name).where(
        S.grade_sources.c.collection_id == cid, S.grade_sources.c.name.in_(sorted(wanted)))).scalars())
    rows = []
    for name in sorted(wanted - have):
        said = described.get(name) if isinstance(described.get(name), Mapping) else {}
        rows.append(dict(collection_id=cid, name=name, file_name=str(said.get("file", "")),
                         imported_at=str(said.get("imported_at", "")), imported_by=str(said.get("imported_by", "")),
                         counted=said.get("counted", True) is not False, changes=list(said.get("changes", ()))))
    if rows:
        conn.execute(S.grade_sources.insert(), rows)


def check_described(value: Any, where: str) -> None:
    """Refuse a malformed GRADE_SOURCES field of a file's question."""
    ok = value is None or isinstance(value, dict) and all(
        is_file_source(n) and isinstance(d, dict) and isinstance(d.get("counted", True), bool)
        and all(isinstance(d.get(k, ""), str) for k in ("file", "imported_at", "imported_by"))
        and isinstance(d.get("changes", []), list) for n, d in value.items())
    if not ok:
        raise InputError(f"{where}: `{GRADE_SOURCES}` must be {{\"(name)\": {{file, imported_at, imported_by, "
                         "counted: true or false, changes}}}",
                         hint="export the golden set from the app again, or drop that field from the line.")


_HAVE_TABLE: "weakref.WeakSet[sa.Engine]" = weakref.WeakSet()  # engines whose database has the table


def _kept(conn: Connection) -> bool:
    # A database read before its upgrade to v17 (a Store() opened without migrating) keeps no sources:
    # every file's grades were "(import)"'s, counted. Asked of the catalog once per engine (a table is
    # never dropped again), not on every status read of the Label page.
    if conn.engine in _HAVE_TABLE:
        return True
    if not sa.inspect(conn).has_table("grade_sources"):
        return False
    _HAVE_TABLE.add(conn.engine)
    return True


def apart(conn: Connection, cid: int) -> frozenset[str]:
    """The names of the collection's sources that are not counted."""
    if not _kept(conn):
        return frozenset()
    g = S.grade_sources
    return frozenset(conn.execute(sa.select(g.c.name).where(g.c.collection_id == cid, g.c.counted == sa.false()))
                     .scalars())


def apart_query(cid: int | sa.ColumnElement) -> sa.Select:
    """SELECT the names of a collection's uncounted sources (for `annotator NOT IN (...)`)."""
    g = S.grade_sources
    return sa.select(g.c.name).where(g.c.collection_id == cid, g.c.counted == sa.false())


def apart_by_question(conn: Connection, question_ids: list[int]) -> dict[int, frozenset[str]]:
    """question row id -> the uncounted sources of its collection (only questions whose collection has some)."""
    q, g = S.questions, S.grade_sources
    out: dict[int, set[str]] = {}
    for some in chunks(question_ids):
        for rid, name in conn.execute(sa.select(q.c.id, g.c.name).join(g, g.c.collection_id == q.c.collection_id)
                                      .where(q.c.id.in_(some), g.c.counted == sa.false())):
            out.setdefault(rid, set()).add(name)
    return {rid: frozenset(names) for rid, names in out.items()}


def _to_source(r: Any, n_grades: int = 0, n_questions: int = 0) -> GradeSource:
    return GradeSource(r.name, r.file_name, r.imported_at, r.imported_by, bool(r.counted),
                       tuple(r.changes or ()), n_grades, n_questions)


def list_sources(conn: Connection, cid: int) -> list[GradeSource]:
    """The collection's sources, oldest first, each with its grades and the questions they are on."""
    g, j, q = S.grade_sources, S.judgments, S.questions
    counts = {r.annotator: (r.n, r.nq) for r in conn.execute(
        sa.select(j.c.annotator, sa.func.count().label("n"), sa.func.count(sa.distinct(j.c.question_id)).label("nq"))
        .join(q, q.c.id == j.c.question_id).where(q.c.collection_id == cid, j.c.annotator.startswith("("))
        .group_by(j.c.annotator))}
    return [_to_source(r, *counts.get(r.name, (0, 0)))
            for r in conn.execute(sa.select(g).where(g.c.collection_id == cid).order_by(g.c.id))]


def described(conn: Connection, cid: int) -> dict[str, dict[str, Any]]:
    """name -> what the export says of each source (GRADE_SOURCES)."""
    if not _kept(conn):
        return {}
    return {s.name: {"file": s.file_name, "imported_at": s.imported_at, "imported_by": s.imported_by,
                     "counted": s.counted, "changes": list(s.changes)}
            for s in (_to_source(r) for r in conn.execute(
                sa.select(S.grade_sources).where(S.grade_sources.c.collection_id == cid)))}


def set_counted(conn: Connection, collection: str, name: str, counted: bool, *, by: str) -> GradeSource:
    """Count the source's grades in the consensus (where no person graded the document) or keep them
    apart; the switch is kept in its `changes`. A write: the caller's transaction."""
    from labeler_storage import votes  # votes reads the uncounted sources from here: imported when used

    cid = collection_id(conn, collection, create=True)
    g = S.grade_sources
    row = conn.execute(sa.select(g).where(g.c.collection_id == cid, g.c.name == name)).first()
    if row is None:
        known = [s.name for s in list_sources(conn, cid)]
        raise InputError(f"no grade source named {name!r} in collection {collection!r}",
                         hint=f"known sources: {', '.join(known) or '(none: no consensus-only file was imported)'}.")
    if bool(row.counted) == counted:
        return _to_source(row)
    changes = [*(row.changes or ()), {"counted": counted, "at": now_iso(conn), "by": by}]
    conn.execute(g.update().where(g.c.id == row.id).values(counted=counted, changes=changes))
    v, q = S.unanswerable_votes, S.questions
    voted = list(conn.execute(sa.select(v.c.question_id).join(q, q.c.id == v.c.question_id)
                              .where(q.c.collection_id == cid, v.c.annotator == name)).scalars())
    votes.refresh_unanswerable(conn, voted)
    bump_revision(conn, cid, None)  # every status, consensus and held question index may change
    return next(s for s in list_sources(conn, cid) if s.name == name)
