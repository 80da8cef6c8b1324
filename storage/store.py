"""The labeler database: questions, judgments, consensus, golden-set import/export and runs.

One `Store` per database URL (SQLite by default: one file under `$LABELER_HOME`). Every
public write is one transaction. On SQLite the transaction starts with `BEGIN IMMEDIATE`, so
concurrent writers queue on the database lock (for up to BUSY_TIMEOUT_S) instead of failing
with "database is locked" when a read lock cannot be upgraded; WAL mode lets readers go on
while one writer writes; `synchronous=FULL` keeps a committed label through a power cut
(see open_store).

Rules this module decides (DESIGN.md leaves them open):
- Unanswerable: a question cannot be marked unanswerable while any annotator grades one of
  its documents >= 1, and a document of an unanswerable question cannot be graded >= 1
  (grade 0, "seen and rejected", is fine). The error names the documents; clear them first.
  So an exported golden set always passes its own validator.
- Consensus: floor of the median grade over the annotators (see labeler.agreement).
- Import: a golden file's grades are stored as the judgments of the pseudo-annotator
  IMPORT_ANNOTATOR (the file holds a consensus, not any one person's grades); the
  annotators the file names are kept as the question's credited annotators and written
  back on export. Re-importing replaces the imported grades of the questions in the file,
  keeps the grades people gave in the app, and keeps questions the file does not mention.
  Agreement statistics leave the pseudo-annotator out.
- Grades set in the app are 0-3; an import may carry another scale if it was read with
  keep_scale=True (the golden reader refuses it otherwise).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from labeler.agreement import AgreementReport, Consensus, Ratings, agreement, consensus
from labeler.errors import InputError, LabelerError, StorageError
from labeler.golden import (
    GRADE_MAX, GRADE_MIN, GoldenHealth, GoldenQuery, GoldenSet, golden_health, id_problem,
)
from storage import schema as S
from storage.schema import utc_now

DB_FILENAME = "labeler.db"
DEFAULT_COLLECTION = "default"
IMPORT_ANNOTATOR = "(import)"
BUSY_TIMEOUT_S = 60
_CHUNK = 500  # rows per executemany / IN (...) list


def default_db_url() -> str:
    """`sqlite:///$LABELER_HOME/labeler.db` ($LABELER_HOME defaults to `.labeler/` in the cwd)."""
    from labeler.paths import labeler_home

    return "sqlite:///" + str(labeler_home() / DB_FILENAME)


def normalize_db_url(url: str | Path | None) -> str:
    """A database URL; a plain path means a SQLite file there, None the default database."""
    if url is None or str(url).strip() == "":
        return default_db_url()
    text = str(url)
    if "://" in text or text.startswith("sqlite:"):
        return text
    return "sqlite:///" + str(Path(text).expanduser().resolve())


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Collection:
    """A corpus and the golden set written against it."""

    name: str
    corpus_path: str | None
    corpus_fingerprint: str | None
    created_at: str


@dataclass(frozen=True)
class Question:
    """A question as stored (its consensus grades live in judgments)."""

    query_id: str
    text: str
    query_type: str = ""
    unanswerable: bool = False
    notes: str = ""
    author: str = ""
    created_at: str = ""
    updated_at: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    credited_annotators: tuple[str, ...] = ()
    corpus_fingerprint: str | None = None


@dataclass(frozen=True)
class Judgment:
    """One annotator's grade for one document of one question."""

    query_id: str
    doc_id: str
    grade: int
    annotator: str
    note: str = ""
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True)
class QuestionStatus:
    """A question with every judgment on it, its consensus grades and labelling status.

    status: "unanswerable" (marked so), "done" (some document has consensus grade >= 1),
    "started" (judged, nothing relevant yet), "new" (no judgment yet).
    """

    question: Question
    judgments: tuple[Judgment, ...]
    consensus: Mapping[str, int]  # doc_id -> consensus grade
    status: str

    @property
    def n_judged(self) -> int:
        """Documents with at least one judgment."""
        return len(self.consensus)

    @property
    def n_relevant(self) -> int:
        """Documents whose consensus grade is >= 1."""
        return sum(1 for g in self.consensus.values() if g >= 1)

    @property
    def annotators(self) -> tuple[str, ...]:
        """People who judged this question (the import pseudo-annotator left out)."""
        return tuple(sorted({j.annotator for j in self.judgments} - {IMPORT_ANNOTATOR}))

    def grades_by(self, annotator: str) -> dict[str, int]:
        """doc_id -> grade given by one annotator."""
        return {j.doc_id: j.grade for j in self.judgments if j.annotator == annotator}


@dataclass(frozen=True)
class Progress:
    """Labelling progress of a collection (see QuestionStatus.status)."""

    n_questions: int
    n_done: int
    n_unanswerable: int
    n_started: int
    n_new: int
    n_judgments: int

    @property
    def share_complete(self) -> float:
        """(done + unanswerable) / questions; 0.0 when there are none."""
        return (self.n_done + self.n_unanswerable) / self.n_questions if self.n_questions else 0.0


@dataclass(frozen=True)
class ImportSummary:
    """What an import changed."""

    collection: str
    n_questions: int
    n_new: int
    n_updated: int
    n_judgments: int
    n_unanswerable: int


@dataclass(frozen=True)
class RunSummary:
    """A saved evaluation run without its per-question detail (for lists)."""

    run_id: int
    collection: str
    name: str
    created_at: str
    config_hash: str
    golden_hash: str
    corpus_fingerprint: str | None
    summary: Mapping[str, Any]


@dataclass(frozen=True)
class RunRecord(RunSummary):
    """A saved evaluation run with its config and per-question results."""

    config: Mapping[str, Any] = field(default_factory=dict)
    per_query: Mapping[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- engine


def _is_memory(url: sa.engine.URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


SYNCHRONOUS_LEVELS = ("FULL", "EXTRA", "NORMAL")


def _create_engine(url_text: str, synchronous: str = "FULL") -> Engine:
    try:
        url = sa.engine.make_url(url_text)
    except sa.exc.ArgumentError as exc:
        raise StorageError(f"not a database URL: {url_text!r} ({exc})",
                           hint="use sqlite:///path/to/labeler.db, postgresql://..., or a file path.") from None
    if url.get_backend_name() != "sqlite":
        try:
            return sa.create_engine(url, pool_pre_ping=True)
        except (ImportError, sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
            raise StorageError(f"cannot use database URL {url.render_as_string()}: {exc}",
                               hint="install the database driver, or use a sqlite:/// URL.") from None

    memory = _is_memory(url)
    if not memory and url.database and not url.database.startswith("file:"):
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {"connect_args": {"timeout": BUSY_TIMEOUT_S}}
    if memory:  # one shared connection, else every checkout would see a new empty database
        kwargs.update(poolclass=StaticPool, connect_args={"timeout": BUSY_TIMEOUT_S, "check_same_thread": False})
    engine = sa.create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record) -> None:
        # Take transaction control from the sqlite3 driver so BEGIN is ours (see _on_begin).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
        cur.execute("PRAGMA foreign_keys = ON")
        if not memory and cur.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            cur.execute("PRAGMA journal_mode = WAL")
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A writer takes the write lock up front: two deferred transactions that both read and
        # then try to write would deadlock on the upgrade, and one would fail at once.
        write = conn.get_execution_options().get("labeler_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _storage_error(exc: sa.exc.DBAPIError, url: str) -> StorageError:
    detail = str(getattr(exc, "orig", exc)) or type(exc).__name__
    if "locked" in detail or "busy" in detail:
        hint = (f"another process held the database for over {BUSY_TIMEOUT_S} s; "
                "try again, or look for a stuck labeler process.")
    elif "not a database" in detail or "malformed" in detail:
        hint = "the file is not a labeler database or is damaged; point --db / LABELER_HOME elsewhere."
    elif "unable to open" in detail or "readonly" in detail:
        hint = "check that the folder exists and is writable, or set LABELER_HOME / --db."
    else:
        hint = "check the database URL and that the database is reachable."
    return StorageError(f"database error ({detail})", path=url, hint=hint)


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


# --------------------------------------------------------------------------- helpers


def _check_grade(grade: Any) -> int:
    if isinstance(grade, bool) or not isinstance(grade, int) or not GRADE_MIN <= grade <= GRADE_MAX:
        raise InputError(f"grade must be an integer {GRADE_MIN}-{GRADE_MAX}, got {grade!r}",
                         hint="0 not relevant, 1 partially relevant, 2 relevant, 3 answers fully.")
    return grade


def _check_id(value: Any, what: str) -> str:
    if why := id_problem(value, what):
        raise InputError(why, hint=f"give a non-empty {what} without tabs or surrounding spaces.")
    return value


def _check_annotator(annotator: Any) -> str:
    if not isinstance(annotator, str) or not annotator.strip():
        raise InputError("an annotator name is required", hint="pick your name before labelling.")
    if annotator == IMPORT_ANNOTATOR:
        raise InputError(f"{IMPORT_ANNOTATOR!r} is reserved for imported grades", hint="use your own name.")
    return annotator.strip()


def _check_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InputError("the question text is empty", hint="write the question as an annotator would ask it.")
    return text


def _chunks(items: list, size: int = _CHUNK) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _json_ready(value: Any) -> Any:
    """Plain JSON types from numpy scalars, dataclasses, tuples and sets (for run records)."""
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return _json_ready(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _json_ready(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_json_ready(v) for v in value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    return value


_AUTO_ID = re.compile(r"q-(\d+)")


def _question(row: Any) -> Question:
    return Question(
        query_id=row.query_id, text=row.text, query_type=row.query_type, unanswerable=bool(row.unanswerable),
        notes=row.notes, author=row.author, created_at=row.created_at, updated_at=row.updated_at,
        extra=row.extra or {}, credited_annotators=tuple(row.credited_annotators or ()),
        corpus_fingerprint=row.corpus_fingerprint,
    )


def _judgment(row: Any) -> Judgment:
    return Judgment(row.query_id, row.doc_id, row.grade, row.annotator, row.note, row.created_at, row.updated_at)


def _status(q: Question, grades: Mapping[str, int]) -> str:
    if q.unanswerable:
        return "unanswerable"
    if any(g >= 1 for g in grades.values()):
        return "done"
    return "started" if grades else "new"


def _write_judgments(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """THE place a judgment is written: insert, or update grade/note/updated_at of the existing row.

    Each row: question_id, doc_id, grade, annotator, note, created_at, updated_at.
    """
    if not rows:
        return
    t = S.judgments
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    stmt = insert(t)
    stmt = stmt.on_conflict_do_update(
        index_elements=[t.c.question_id, t.c.doc_id, t.c.annotator],
        set_={"grade": stmt.excluded.grade, "note": stmt.excluded.note, "updated_at": stmt.excluded.updated_at},
    )
    for chunk in _chunks(rows):
        conn.execute(stmt, chunk)


# --------------------------------------------------------------------------- the store


class Store:
    """Repository over one database; safe to share between threads (st.cache_resource)."""

    def __init__(self, url: str, *, synchronous: str = "FULL") -> None:
        if synchronous not in SYNCHRONOUS_LEVELS:
            raise StorageError(f"unknown synchronous level {synchronous!r}",
                               hint=f"use one of {', '.join(SYNCHRONOUS_LEVELS)}.")
        self.url = url
        self.engine = _create_engine(url, synchronous)

    def __repr__(self) -> str:
        return f"Store({self.engine.url.render_as_string(hide_password=True)!r})"

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()

    # ---- transactions

    @contextmanager
    def _tx(self, write: bool) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn:
                if write:
                    conn.execution_options(labeler_write=True)
                with conn.begin():
                    yield conn
        except LabelerError:
            raise
        except sa.exc.DBAPIError as exc:
            raise _storage_error(exc, self.url) from exc

    def _write(self):
        """One write transaction (BEGIN IMMEDIATE on SQLite)."""
        return self._tx(True)

    def _read(self):
        """One read transaction: a consistent snapshot."""
        return self._tx(False)

    def migrate(self) -> list[int]:
        """Apply pending migrations; the versions applied (empty when up to date)."""
        with self._read() as conn:
            if not S.pending_migrations(S.current_version(conn)):
                return []
        with self._write() as conn:  # re-checked under the write lock: another process may have won
            return S.apply_migrations(conn)

    def schema_version(self) -> int:
        """The database's schema version."""
        with self._read() as conn:
            return S.current_version(conn)

    # ---- collections

    def _collection_row(self, conn: Connection, name: str) -> Any:
        return conn.execute(sa.select(S.collections).where(S.collections.c.name == name)).first()

    def _collection_id(self, conn: Connection, name: str, *, create: bool = False) -> int:
        row = self._collection_row(conn, name)
        if row is not None:
            return row.id
        if not create:
            known = [r.name for r in conn.execute(sa.select(S.collections.c.name).order_by(S.collections.c.name))]
            raise InputError(f"no collection named {name!r}",
                             hint=f"known collections: {', '.join(known) or '(none yet)'}; "
                                  "import a golden set or add a question to create one.")
        if not isinstance(name, str) or not name.strip():
            raise InputError("a collection name is required", hint=f"the default is {DEFAULT_COLLECTION!r}.")
        return conn.execute(S.collections.insert().values(name=name, created_at=utc_now())).inserted_primary_key[0]

    def ensure_collection(self, collection: str = DEFAULT_COLLECTION, *, corpus_path: str | None = None,
                          corpus_fingerprint: str | None = None) -> Collection:
        """The collection, created if missing; a given corpus path/fingerprint is recorded on it."""
        name = collection
        with self._write() as conn:
            cid = self._collection_id(conn, name, create=True)
            values = {k: v for k, v in (("corpus_path", corpus_path), ("corpus_fingerprint", corpus_fingerprint))
                      if v is not None}
            if values:
                conn.execute(S.collections.update().where(S.collections.c.id == cid).values(**values))
            return self._collection(self._collection_row(conn, name))

    @staticmethod
    def _collection(row: Any) -> Collection:
        return Collection(row.name, row.corpus_path, row.corpus_fingerprint, row.created_at)

    def get_collection(self, collection: str = DEFAULT_COLLECTION) -> Collection | None:
        """The collection, or None."""
        with self._read() as conn:
            row = self._collection_row(conn, collection)
            return self._collection(row) if row is not None else None

    def list_collections(self) -> list[Collection]:
        """Every collection, by name."""
        with self._read() as conn:
            rows = conn.execute(sa.select(S.collections).order_by(S.collections.c.name))
            return [self._collection(r) for r in rows]

    def delete_collection(self, collection: str) -> bool:
        """Delete a collection with its questions, judgments and runs; False if it did not exist."""
        with self._write() as conn:
            return conn.execute(S.collections.delete().where(S.collections.c.name == collection)).rowcount > 0

    # ---- questions

    def _question_query(self):
        q = S.questions
        return sa.select(q.c.id, q.c.query_id, q.c.text, q.c.query_type, q.c.unanswerable, q.c.notes, q.c.author,
                         q.c.created_at, q.c.updated_at, q.c.extra, q.c.credited_annotators, q.c.corpus_fingerprint)

    def _question_row(self, conn: Connection, collection: str, query_id: str, *, required: bool = True) -> Any:
        cid = self._collection_id(conn, collection)
        row = conn.execute(self._question_query().where(
            S.questions.c.collection_id == cid, S.questions.c.query_id == query_id)).first()
        if row is None and required:
            raise InputError(f"no question {query_id!r} in collection {collection!r}",
                             hint="it may have been deleted; reload the question list.")
        return row

    def add_question(self, text: str, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
                     query_type: str = "", notes: str = "", author: str = "", unanswerable: bool = False,
                     extra: Mapping[str, Any] | None = None, corpus_fingerprint: str | None = None) -> Question:
        """Add a question (query_id defaults to the next free `q-0001`-style id); creates the collection."""
        _check_text(text)
        if query_id is not None:
            _check_id(query_id, "query id")
        with self._write() as conn:
            cid = self._collection_id(conn, collection, create=True)
            if query_id is None:
                used = conn.execute(sa.select(S.questions.c.query_id).where(S.questions.c.collection_id == cid))
                numbers = [int(m.group(1)) for (qid,) in used if (m := _AUTO_ID.fullmatch(qid))]
                query_id = f"q-{max(numbers, default=0) + 1:04d}"
            elif self._question_row(conn, collection, query_id, required=False) is not None:
                raise InputError(f"question {query_id!r} already exists in collection {collection!r}",
                                 hint="pick another query_id, or edit the existing question.")
            now = utc_now()
            if corpus_fingerprint is None:
                corpus_fingerprint = self._collection_row(conn, collection).corpus_fingerprint
            conn.execute(S.questions.insert().values(
                collection_id=cid, query_id=query_id, text=text, query_type=query_type or "",
                unanswerable=bool(unanswerable), notes=notes or "", author=author or "", created_at=now,
                updated_at=now, extra=dict(extra or {}), credited_annotators=[],
                corpus_fingerprint=corpus_fingerprint))
            return _question(self._question_row(conn, collection, query_id))

    def edit_question(self, query_id: str, *, collection: str = DEFAULT_COLLECTION, text: str | None = None,
                      query_type: str | None = None, notes: str | None = None,
                      extra: Mapping[str, Any] | None = None) -> Question:
        """Change the given fields of a question (None leaves a field as it is)."""
        values: dict[str, Any] = {}
        if text is not None:
            values["text"] = _check_text(text)
        if query_type is not None:
            values["query_type"] = query_type
        if notes is not None:
            values["notes"] = notes
        if extra is not None:
            values["extra"] = dict(extra)
        with self._write() as conn:
            row = self._question_row(conn, collection, query_id)
            if values:
                values["updated_at"] = utc_now()
                conn.execute(S.questions.update().where(S.questions.c.id == row.id).values(**values))
            return _question(self._question_row(conn, collection, query_id))

    def delete_question(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> bool:
        """Delete a question and its judgments; False if there was no such question."""
        with self._write() as conn:
            row = self._question_row(conn, collection, query_id, required=False)
            if row is None:
                return False
            conn.execute(S.questions.delete().where(S.questions.c.id == row.id))
            return True

    def get_question(self, query_id: str, *, collection: str = DEFAULT_COLLECTION) -> Question | None:
        """The question, or None."""
        with self._read() as conn:
            if self._collection_row(conn, collection) is None:
                return None
            row = self._question_row(conn, collection, query_id, required=False)
            return _question(row) if row is not None else None

    def set_unanswerable(self, query_id: str, unanswerable: bool = True, *,
                         collection: str = DEFAULT_COLLECTION) -> Question:
        """Mark (or unmark) a question unanswerable; refused while any document is graded >= 1."""
        with self._write() as conn:
            row = self._question_row(conn, collection, query_id)
            if unanswerable:
                relevant = conn.execute(
                    sa.select(S.judgments.c.doc_id, S.judgments.c.annotator, S.judgments.c.grade)
                    .where(S.judgments.c.question_id == row.id, S.judgments.c.grade >= 1)
                    .order_by(S.judgments.c.doc_id, S.judgments.c.annotator)).all()
                if relevant:
                    shown = ", ".join(f"{r.doc_id} ({r.annotator}: {r.grade})" for r in relevant[:3])
                    more = f" and {len(relevant) - 3} more" if len(relevant) > 3 else ""
                    raise InputError(
                        f"question {query_id!r} has documents graded relevant: {shown}{more}",
                        hint="set those grades to 0 or clear them first; an unanswerable question "
                             "has no relevant document.")
            conn.execute(S.questions.update().where(S.questions.c.id == row.id)
                         .values(unanswerable=bool(unanswerable), updated_at=utc_now()))
            return _question(self._question_row(conn, collection, query_id))

    # ---- judgments

    def set_judgment(self, query_id: str, doc_id: str, grade: int, *, annotator: str,
                     collection: str = DEFAULT_COLLECTION, note: str = "") -> Judgment:
        """Record `annotator`'s grade (0-3) for a document of a question, replacing their earlier one."""
        _check_id(doc_id, "doc id")
        _check_grade(grade)
        annotator = _check_annotator(annotator)
        with self._write() as conn:
            row = self._question_row(conn, collection, query_id)
            if row.unanswerable and grade >= 1:
                raise InputError(f"question {query_id!r} is marked unanswerable, so no document can be graded {grade}",
                                 hint="unmark it as unanswerable first, or grade the document 0.")
            now = utc_now()
            _write_judgments(conn, [dict(question_id=row.id, doc_id=doc_id, grade=grade, annotator=annotator,
                                         note=note or "", created_at=now, updated_at=now)])
            conn.execute(S.questions.update().where(S.questions.c.id == row.id).values(updated_at=now))
            j = S.judgments
            out = conn.execute(sa.select(j, sa.literal(query_id).label("query_id")).where(
                j.c.question_id == row.id, j.c.doc_id == doc_id, j.c.annotator == annotator)).one()
            return _judgment(out)

    def clear_judgment(self, query_id: str, doc_id: str, *, annotator: str,
                       collection: str = DEFAULT_COLLECTION) -> bool:
        """Remove `annotator`'s grade for the document; False if there was none."""
        with self._write() as conn:
            row = self._question_row(conn, collection, query_id)
            j = S.judgments
            done = conn.execute(j.delete().where(j.c.question_id == row.id, j.c.doc_id == doc_id,
                                                 j.c.annotator == annotator)).rowcount > 0
            if done:
                conn.execute(S.questions.update().where(S.questions.c.id == row.id).values(updated_at=utc_now()))
            return done

    def _judgment_rows(self, conn: Connection, cid: int, query_id: str | None = None,
                       annotator: str | None = None) -> list[Judgment]:
        j, q = S.judgments, S.questions
        stmt = (sa.select(j, q.c.query_id).join(q, q.c.id == j.c.question_id).where(q.c.collection_id == cid)
                .order_by(q.c.id, j.c.doc_id, j.c.annotator))
        if query_id is not None:
            stmt = stmt.where(q.c.query_id == query_id)
        if annotator is not None:
            stmt = stmt.where(j.c.annotator == annotator)
        return [_judgment(r) for r in conn.execute(stmt)]

    def judgments(self, *, collection: str = DEFAULT_COLLECTION, query_id: str | None = None,
                  annotator: str | None = None) -> list[Judgment]:
        """Judgments of a collection, optionally of one question and/or one annotator."""
        with self._read() as conn:
            return self._judgment_rows(conn, self._collection_id(conn, collection), query_id, annotator)

    # ---- listing, consensus, agreement, health

    def _load(self, conn: Connection, collection: str) -> tuple[list[Question], list[Judgment]]:
        cid = self._collection_id(conn, collection)
        rows = conn.execute(self._question_query().where(S.questions.c.collection_id == cid)
                            .order_by(S.questions.c.id))
        return [_question(r) for r in rows], self._judgment_rows(conn, cid)

    @staticmethod
    def _ratings(judgments: Iterable[Judgment]) -> dict[tuple[str, str], dict[str, int]]:
        ratings: dict[tuple[str, str], dict[str, int]] = {}
        for j in judgments:
            ratings.setdefault((j.query_id, j.doc_id), {})[j.annotator] = j.grade
        return ratings

    def list_questions(self, *, collection: str = DEFAULT_COLLECTION) -> list[QuestionStatus]:
        """Every question (in creation order) with its judgments, consensus grades and status."""
        with self._read() as conn:
            questions, judgments = self._load(conn, collection)
        by_question: dict[str, list[Judgment]] = {}
        for j in judgments:
            by_question.setdefault(j.query_id, []).append(j)
        qrels = consensus(self._ratings(judgments)).qrels
        out = []
        for q in questions:
            grades = dict(qrels.get(q.query_id, {}))
            out.append(QuestionStatus(q, tuple(by_question.get(q.query_id, ())), grades, _status(q, grades)))
        return out

    def progress(self, *, collection: str = DEFAULT_COLLECTION) -> Progress:
        """Counts of questions by status, and of judgments."""
        statuses = self.list_questions(collection=collection)
        count = {s: sum(1 for x in statuses if x.status == s) for s in ("done", "unanswerable", "started", "new")}
        return Progress(len(statuses), count["done"], count["unanswerable"], count["started"], count["new"],
                        sum(len(x.judgments) for x in statuses))

    def ratings(self, *, collection: str = DEFAULT_COLLECTION) -> Ratings:
        """(query_id, doc_id) -> {annotator: grade} for the collection."""
        return self._ratings(self.judgments(collection=collection))

    def consensus(self, *, collection: str = DEFAULT_COLLECTION) -> Consensus:
        """Consensus grade per (question, document), and the disagreements (largest spread first)."""
        return consensus(self.ratings(collection=collection))

    def agreement(self, *, collection: str = DEFAULT_COLLECTION) -> AgreementReport:
        """Cohen's kappa per annotator pair, Fleiss' kappa, Krippendorff's alpha (people only)."""
        return agreement(self.ratings(collection=collection), exclude=(IMPORT_ANNOTATOR,))

    def health(self, *, collection: str = DEFAULT_COLLECTION) -> GoldenHealth:
        """Question count, unanswerable share, per-type counts, questions with no relevant doc yet."""
        return golden_health(self.export_golden(collection=collection))

    # ---- golden sets

    def export_golden(self, *, collection: str = DEFAULT_COLLECTION, complete_only: bool = False) -> GoldenSet:
        """The collection's golden set with consensus grades (complete_only: done or unanswerable only)."""
        with self._read() as conn:
            coll = self._collection_row(conn, collection)
            questions, judgments = self._load(conn, collection)
        qrels = consensus(self._ratings(judgments)).qrels
        people: dict[str, set[str]] = {}
        for j in judgments:
            if j.annotator != IMPORT_ANNOTATOR:
                people.setdefault(j.query_id, set()).add(j.annotator)
        out = []
        for q in questions:
            grades = dict(qrels.get(q.query_id, {}))
            if complete_only and _status(q, grades) not in ("done", "unanswerable"):
                continue
            credited = list(q.credited_annotators)
            annotators = credited + sorted(people.get(q.query_id, set()) - set(credited))
            out.append(GoldenQuery(
                query_id=q.query_id, question=q.text, query_type=q.query_type, unanswerable=q.unanswerable,
                relevance=grades, annotators=tuple(annotators), notes=q.notes, created_at=q.created_at,
                updated_at=q.updated_at, corpus_fingerprint=q.corpus_fingerprint or coll.corpus_fingerprint,
                extra=q.extra,
            ))
        return GoldenSet(tuple(out))

    def import_golden(self, golden: GoldenSet, *, collection: str = DEFAULT_COLLECTION,
                      corpus_path: str | None = None, corpus_fingerprint: str | None = None,
                      progress: Callable[[int, int], None] | None = None) -> ImportSummary:
        """Import a (validated) golden set in ONE transaction: all of it, or nothing.

        Questions in the file are created or updated; their imported grades replace earlier
        imported grades; people's grades and questions not in the file are kept.
        `progress(done, total)` is called inside the transaction after each batch.
        """
        conflicts = [q.query_id for q in golden.queries if q.unanswerable and any(g >= 1 for g in q.relevance.values())]
        if conflicts:
            raise InputError(f"questions marked unanswerable but with relevant documents: {', '.join(conflicts[:5])}",
                             hint="validate the golden set with read_golden / parse_golden_jsonl first.")
        total = len(golden.queries)
        now = utc_now()
        with self._write() as conn:
            cid = self._collection_id(conn, collection, create=True)
            values = {k: v for k, v in (("corpus_path", corpus_path), ("corpus_fingerprint", corpus_fingerprint))
                      if v is not None}
            if values:
                conn.execute(S.collections.update().where(S.collections.c.id == cid).values(**values))
            q = S.questions
            existing = {r.query_id: r.id for r in conn.execute(
                sa.select(q.c.query_id, q.c.id).where(q.c.collection_id == cid))}

            def row_values(g: GoldenQuery) -> dict[str, Any]:
                return dict(text=g.question, query_type=g.query_type, unanswerable=bool(g.unanswerable),
                            notes=g.notes, created_at=g.created_at or now, updated_at=g.updated_at or now,
                            extra=dict(g.extra), credited_annotators=list(g.annotators),
                            corpus_fingerprint=g.corpus_fingerprint)

            done = n_new = n_judgments = 0
            for batch in _chunks(list(golden.queries)):
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
                    conn.execute(S.judgments.delete().where(S.judgments.c.annotator == IMPORT_ANNOTATOR,
                                                            S.judgments.c.question_id.in_(old_ids)))
                    self._check_unanswerable_against_people(conn, [g for g in old if g.unanswerable], existing)
                rows = [dict(question_id=existing[g.query_id], doc_id=doc_id, grade=grade, annotator=IMPORT_ANNOTATOR,
                             note="", created_at=now, updated_at=now)
                        for g in batch for doc_id, grade in g.relevance.items()]
                _write_judgments(conn, rows)
                n_judgments += len(rows)
                done += len(batch)
                if progress is not None:
                    progress(done, total)
        return ImportSummary(collection, total, n_new, total - n_new, n_judgments,
                             sum(1 for g in golden.queries if g.unanswerable))

    @staticmethod
    def _check_unanswerable_against_people(conn: Connection, marked: list[GoldenQuery],
                                           ids: Mapping[str, int]) -> None:
        if not marked:
            return
        j, qt = S.judgments, S.questions
        rows = conn.execute(sa.select(qt.c.query_id, j.c.doc_id, j.c.annotator).join(qt, qt.c.id == j.c.question_id)
                            .where(j.c.question_id.in_([ids[g.query_id] for g in marked]), j.c.grade >= 1)).all()
        if rows:
            shown = ", ".join(f"{r.query_id}/{r.doc_id} ({r.annotator})" for r in rows[:3])
            raise InputError(f"the file marks questions unanswerable that annotators graded relevant here: {shown}",
                             hint="resolve those judgments in the app first, or import into another --collection.")

    # ---- runs

    def save_run(self, config: Any, *, summary: Mapping[str, Any], per_query: Mapping[str, Any],
                 golden_hash: str, corpus_fingerprint: str | None = None, config_hash: str | None = None,
                 name: str = "", collection: str = DEFAULT_COLLECTION) -> RunRecord:
        """Store an evaluation run; `config` is a RunConfig (or any JSON-able mapping)."""
        config_dict = _json_ready(config)
        if not isinstance(config_dict, dict):
            raise InputError("a run config must be a mapping or a RunConfig", hint="pass RunConfig(...) or its to_dict().")
        if config_hash is None:
            config_hash = getattr(config, "config_hash", None) or hashlib.sha256(
                json.dumps(config_dict, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:12]
        with self._write() as conn:
            cid = self._collection_id(conn, collection, create=True)
            run_id = conn.execute(S.runs.insert().values(
                collection_id=cid, name=name or "", config=config_dict, config_hash=config_hash,
                golden_hash=golden_hash, corpus_fingerprint=corpus_fingerprint, summary=_json_ready(summary),
                per_query=_json_ready(per_query), created_at=utc_now())).inserted_primary_key[0]
        return self.load_run(run_id)

    def _run_select(self, *columns):
        r, c = S.runs, S.collections
        return sa.select(r.c.id, c.c.name.label("collection"), r.c.name, r.c.created_at, r.c.config_hash,
                         r.c.golden_hash, r.c.corpus_fingerprint, r.c.summary, *columns).join(c, c.c.id == r.c.collection_id)

    def list_runs(self, *, collection: str = DEFAULT_COLLECTION, limit: int | None = None) -> list[RunSummary]:
        """Saved runs of a collection, newest first (no per-question detail)."""
        with self._read() as conn:
            cid = self._collection_id(conn, collection)
            stmt = self._run_select().where(S.runs.c.collection_id == cid).order_by(S.runs.c.id.desc())
            if limit is not None:
                stmt = stmt.limit(limit)
            return [RunSummary(r.id, r.collection, r.name, r.created_at, r.config_hash, r.golden_hash,
                               r.corpus_fingerprint, r.summary) for r in conn.execute(stmt)]

    def load_run(self, run_id: int) -> RunRecord:
        """A saved run with its config and per-question results."""
        with self._read() as conn:
            r = conn.execute(self._run_select(S.runs.c.config, S.runs.c.per_query)
                             .where(S.runs.c.id == run_id)).first()
        if r is None:
            raise InputError(f"no saved run with id {run_id}", hint="list the runs to see their ids.")
        return RunRecord(r.id, r.collection, r.name, r.created_at, r.config_hash, r.golden_hash,
                         r.corpus_fingerprint, r.summary, config=r.config, per_query=r.per_query)

    def delete_run(self, run_id: int) -> bool:
        """Delete a saved run; False if there was none."""
        with self._write() as conn:
            return conn.execute(S.runs.delete().where(S.runs.c.id == run_id)).rowcount > 0
