"""The database connection: URLs, the SQLite and PostgreSQL engines, transactions, and errors.

Every public write is one transaction. On SQLite the transaction starts with `BEGIN IMMEDIATE`,
so concurrent writers queue on the database lock (for up to BUSY_TIMEOUT_S) instead of failing
with "database is locked" when a read lock cannot be upgraded; WAL mode lets readers go on
while one writer writes; `synchronous=FULL` keeps a committed label through a power cut.

A SQLite path is checked before anything is opened, so a mistyped `--db` never leaves an empty
database behind: its folder must exist and be a writable folder. Only the default data
directory (`$LABELER_HOME`, else `.labeler/` in the cwd) is created on first use.

PostgreSQL (`postgresql+psycopg://user@host/db`, psycopg 3; `postgresql://` means the same) runs
at READ COMMITTED: a write that reads before it writes locks what it depends on first (its
collection's row, labeler_storage.collection.lock_collection), and inserts that two writers may race to
make rely on ON CONFLICT, so the same writes are safe on both engines. LABELER_DB_URL, when set,
is the default database instead of the SQLite file.
"""
from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from labeler.errors import LabelerError, StorageError
from labeler_storage import migrations as M
from labeler_storage.clock import CLOCK_KEY, Clock, system_clock

DB_FILENAME = "labeler.db"
DB_URL_ENV = "LABELER_DB_URL"
PG_CONNECT_TIMEOUT_S = 10
BUSY_TIMEOUT_S = 60
SYNCHRONOUS_LEVELS = ("FULL", "EXTRA", "NORMAL")


def data_dir() -> Path:
    """The data directory ($LABELER_HOME, else `.labeler/` in the cwd), created on first use."""
    from labeler.paths import labeler_home

    try:
        home = labeler_home()
    except OSError as exc:
        where = exc.filename or os.environ.get("LABELER_HOME") or ".labeler"
        raise StorageError(f"cannot create the data directory ({exc.strerror or exc})", path=str(where),
                           hint="set LABELER_HOME to a writable folder, or pass --db.") from None
    if not os.access(home, os.W_OK | os.X_OK):
        raise StorageError("the data directory is not writable", path=str(home),
                           hint="set LABELER_HOME to a writable folder, or pass --db.")
    return home


def default_db_url() -> str:
    """$LABELER_DB_URL when set, else `sqlite:///$LABELER_HOME/labeler.db` ($LABELER_HOME: `.labeler/` in the cwd)."""
    if os.environ.get(DB_URL_ENV, "").strip():
        return normalize_db_url(os.environ[DB_URL_ENV].strip())
    return "sqlite:///" + str(data_dir() / DB_FILENAME)


def normalize_db_url(url: str | Path | None) -> str:
    """A database URL; a plain path means a SQLite file there, None the default database."""
    if url is None or str(url).strip() == "":
        return default_db_url()
    text = str(url)
    for scheme in ("postgresql://", "postgres://"):  # psycopg 3 is the driver we ship, not psycopg2
        if text.startswith(scheme):
            return "postgresql+psycopg://" + text[len(scheme):]
    if "://" in text or text.startswith("sqlite:"):
        return text
    try:
        return "sqlite:///" + str(Path(text).expanduser().resolve())
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
        raise StorageError(f"cannot resolve the database path: {exc}", path=text,
                           hint="give the path of a SQLite file in an existing folder.") from None


def sqlite_path_problem(path: Path) -> tuple[str, str] | None:
    """(what is wrong, hint) when a SQLite database cannot live at `path`, else None. Creates nothing."""
    folder = path.parent
    if path.is_dir():
        return "the database path is a folder", f"name a file, e.g. {path / DB_FILENAME}."
    if not folder.exists():
        existing = next((p for p in folder.parents if p.exists()), None)
        if existing is not None and not existing.is_dir():
            return (f"the database folder is under a regular file ({existing})",
                    "pass a --db path inside a folder.")
        return ("the database folder does not exist",
                f"create it first (mkdir -p {folder}), or pass another --db path.")
    if not folder.is_dir():
        return f"the database folder {folder} is a regular file", "pass a --db path inside a folder."
    if not os.access(folder, os.W_OK | os.X_OK):
        # SQLite writes its -wal and -shm files beside the database, so the folder must be writable.
        return f"the database folder {folder} is not writable", "pass a --db path in a folder you can write to."
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        return "the database file is not readable and writable", "fix its permissions, or pass another --db."
    return None


def _is_memory(url: sa.engine.URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


def create_engine(url_text: str, synchronous: str = "FULL") -> Engine:
    """An engine for the URL: on SQLite with the labeler's pragmas and write locking, on PostgreSQL at READ COMMITTED."""
    try:
        url = sa.engine.make_url(url_text)
    except sa.exc.ArgumentError as exc:
        raise StorageError(f"not a database URL: {url_text!r} ({exc})",
                           hint="use sqlite:///path/to/labeler.db, postgresql://..., or a file path.") from None
    if url.get_backend_name() != "sqlite":
        kwargs = {}
        if url.get_backend_name() == "postgresql":
            if url.drivername == "postgresql":  # psycopg 3, not SQLAlchemy's default psycopg2
                url = url.set(drivername="postgresql+psycopg")
            kwargs = {"isolation_level": "READ COMMITTED",
                      "connect_args": {} if "connect_timeout" in url.query else {"connect_timeout": PG_CONNECT_TIMEOUT_S}}
        try:
            return sa.create_engine(url, pool_pre_ping=True, **kwargs)
        except (ImportError, sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
            raise StorageError(f"cannot use database URL {url.render_as_string(hide_password=True)}: {exc}",
                               hint="install the database driver (PostgreSQL: pip install 'psycopg[binary]'), "
                                    "or use a sqlite:/// URL.") from None

    memory = _is_memory(url)
    if not memory and url.database and not url.database.startswith("file:"):
        path = Path(url.database).expanduser()
        if problem := sqlite_path_problem(path):
            raise StorageError(problem[0], path=str(path), hint=problem[1])
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
        if not memory:
            _use_wal(cur)
        cur.execute(f"PRAGMA synchronous = {synchronous}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A writer takes the write lock up front: two deferred transactions that both read and
        # then try to write would deadlock on the upgrade, and one would fail at once.
        write = conn.get_execution_options().get("labeler_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _use_wal(cur: sqlite3.Cursor) -> None:
    # Switching a new file to WAL needs it to itself, and SQLite answers "locked" at once instead of
    # waiting (busy_timeout does not apply) while another connection's first transaction runs, as
    # when several processes open one new database together: try again until that one ends.
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            if cur.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                cur.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def storage_error(exc: sa.exc.DBAPIError, url: str) -> StorageError:
    """A driver error as a StorageError with a hint for the likely cause."""
    detail = (str(getattr(exc, "orig", exc)) or type(exc).__name__).strip()
    if "could not translate host" in detail or "connection failed" in detail or "Connection refused" in detail:
        hint = "check the host and port of the database URL, and that the PostgreSQL server is running."
    elif "password authentication" in detail or ("does not exist" in detail and "database" in detail):
        hint = "check the user, password and database name of the URL (the database must exist: createdb NAME)."
    elif "locked" in detail or "busy" in detail:
        hint = (f"another process held the database for over {BUSY_TIMEOUT_S} s; "
                "try again, or look for a stuck labeler process.")
    elif "not a database" in detail or "malformed" in detail:
        hint = "the file is not a labeler database or is damaged; point --db / LABELER_HOME elsewhere."
    elif "unable to open" in detail or "readonly" in detail:
        hint = "check that the folder exists and is writable, or set LABELER_HOME / --db."
    else:
        hint = "check the database URL and that the database is reachable."
    return StorageError(f"database error ({detail.splitlines()[0]})", path=shown_url(url), hint=hint)


def shown_url(url: str) -> str:
    """The URL as messages show it: the password masked."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url


class Database:
    """An engine with the labeler's transactions and migrations; safe to share between threads."""

    def __init__(self, url: str, *, synchronous: str = "FULL") -> None:
        if synchronous not in SYNCHRONOUS_LEVELS:
            raise StorageError(f"unknown synchronous level {synchronous!r}",
                               hint=f"use one of {', '.join(SYNCHRONOUS_LEVELS)}.")
        self.url = url
        self.engine = create_engine(url, synchronous)
        self.clock: Clock = system_clock  # the store's one clock (storage/clock.py); tests set it

    def close(self) -> None:
        """Release pooled connections."""
        self.engine.dispose()

    @contextmanager
    def _tx(self, write: bool) -> Iterator[Connection]:
        try:
            with self.engine.connect() as conn:
                conn.info[CLOCK_KEY] = self.clock  # now_iso(conn) reads it
                if write:
                    conn.execution_options(labeler_write=True)
                with conn.begin():
                    yield conn
        except LabelerError:
            raise
        except sa.exc.DBAPIError as exc:
            raise storage_error(exc, self.url) from exc

    def write(self):
        """One write transaction (BEGIN IMMEDIATE on SQLite)."""
        return self._tx(True)

    def read(self):
        """One read transaction: a consistent snapshot."""
        return self._tx(False)

    def migrate(self) -> list[int]:
        """Apply pending migrations (Alembic revisions); the versions applied (empty when up to date)."""
        with self.read() as conn:
            if M.up_to_date(M.database_state(conn)):
                return []
        M.script_directory()  # Alembic imported and its revisions read before the write lock is taken
        with self.write() as conn:  # re-checked under the write lock: another process may have won
            return M.upgrade(conn)

    def schema_version(self) -> int:
        """The database's schema version."""
        with self.read() as conn:
            return M.current_version(conn)
