"""A real PostgreSQL server for the tests, from Debian's `postgresql` package (`make postgres`).

Started once per session (initdb + pg_ctl, ~1 s), stopped at the session's end whatever happened.
Each test gets a database of its own with the labeler schema and no rows: the first is a copy of a
migrated template (CREATE DATABASE ... TEMPLATE: 50-90 ms on a busy 2-core machine); after the
test its connections are ended and its rows deleted (ids restarted), ~5 ms, and the next test gets
it. A test that changed the schema (or the version markers) leaves a database that is dropped.

The server runs as the `postgres` user when the tests run as root (initdb refuses root), with its
data directory and unix socket in a temporary folder, on a free TCP port of 127.0.0.1, with trust
authentication and fsync off: a throwaway server where locking matters, not the disk. Its
databases use the C locale, so text sorts by code point as it does on SQLite.

A watchdog process stops the server if the test process dies without its teardown (killed).

Without the binaries the PostgreSQL half of the tests fails in CI (CI set) and is skipped on a
laptop, saying how to install them.
"""
from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

BIN_GLOB = "/usr/lib/postgresql/*/bin"
INSTALL_HINT = "install PostgreSQL with `make postgres` (apt-get install -y postgresql)"
MIGRATED = "labeler_migrated"  # the template of every test database: the schema at the latest version
EMPTY = "template1"
WATCHDOG = """
import os, shutil, subprocess, sys, time
parent, root, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
while os.path.exists(f"/proc/{parent}"):
    time.sleep(1)
subprocess.run(stop, capture_output=True)
shutil.rmtree(root, ignore_errors=True)
"""


def find_bindir() -> Path | None:
    """The folder of initdb/pg_ctl: Debian's newest version, else pg_config's, else the PATH's."""
    found = sorted(glob.glob(f"{BIN_GLOB}/initdb"), key=lambda p: [int(n) for n in re.findall(r"\d+", p)])
    if found:
        return Path(found[-1]).parent
    if pg_config := shutil.which("pg_config"):
        bindir = Path(subprocess.run([pg_config, "--bindir"], capture_output=True, text=True).stdout.strip())
        if (bindir / "initdb").exists():
            return bindir
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One throwaway PostgreSQL cluster in a temporary folder; `create_database()` gives a test its own."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="labeler-pg-"))
        self.port = 0
        self.admin = None
        self._names = (f"t{i}" for i in itertools.count(1))
        self._clean: list[str] = []  # used databases, emptied: the next tests get these
        self._shape: tuple = ()  # what a clean database looks like (tables, version markers, columns)
        self._reset_sql = ""
        self._as_postgres: list[str] = []
        self._watchdog: subprocess.Popen | None = None
        if os.geteuid() == 0:  # initdb refuses root: the cluster belongs to the postgres user
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as_postgres = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self._as_postgres, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}\n{tail}")

    def start(self) -> None:
        """initdb, start on a free port, and build the migrated template database."""
        import psycopg

        data = self.root / "data"
        self._run(str(self.bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        self.port = _free_port()
        options = (f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=200")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(data), "-l", str(self.root / "server.log"), "-w",
                  "-t", "60", "-o", options, "start")
        atexit.register(self.stop)  # also when the session ends without its teardown
        self._watchdog = subprocess.Popen([sys.executable, "-c", WATCHDOG, str(os.getpid()), str(self.root),
                                           *self._stop_command()], start_new_session=True)
        self.admin = psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres",
                                     autocommit=True)
        self.admin.execute(f"CREATE DATABASE {MIGRATED} TEMPLATE {EMPTY}")
        from labeler_storage import open_store

        open_store(self.url(MIGRATED)).close()  # closed: a template must have no connections
        with self._connect(MIGRATED) as conn:
            self._shape = self._shape_of(conn)
            tables = [t for t in self._shape[0] if t not in ("alembic_version", "schema_version")]
            sequences = [r[0] for r in conn.execute("SELECT sequencename FROM pg_sequences")]
        # Foreign keys unchecked while emptying (this session only): the tables can go in any order.
        self._reset_sql = " ".join(["SET session_replication_role = replica;"]
                                   + [f'DELETE FROM "{t}";' for t in tables]
                                   + [f'ALTER SEQUENCE "{s}" RESTART;' for s in sequences])

    def _connect(self, name: str):
        import psycopg

        return psycopg.connect(f"host={self.root} port={self.port} user=postgres dbname={name}", autocommit=True)

    @staticmethod
    def _shape_of(conn) -> tuple:
        tables = tuple(r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"))
        markers = conn.execute("SELECT string_agg(version_num, ',') FROM alembic_version"
                               ).fetchone() if "alembic_version" in tables else None
        columns = conn.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public'"
                               ).fetchone()[0]
        return tables, markers, columns

    def url(self, name: str) -> str:
        """The SQLAlchemy URL of one of the server's databases."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{name}"

    def database(self) -> str:
        """A database with the labeler schema and no rows, for one test (give it back after); its URL."""
        return self.url(self._clean.pop()) if self._clean else self.create_database()

    def give_back(self, url: str) -> None:
        """End the test's connections and delete its rows for the next test; or drop the database when
        the test changed its schema."""
        name = url.rsplit("/", 1)[1]
        self.admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = %s AND pid <> pg_backend_pid()", (name,))
        with self._connect(name) as conn:
            if self._shape_of(conn) == self._shape:
                conn.execute(self._reset_sql)
                self._clean.append(name)
                return
        self.drop_database(url)

    def create_database(self, *, migrated: bool = True) -> str:
        """A new database (with the labeler schema, or empty); its URL."""
        name = next(self._names)
        self.admin.execute(f"CREATE DATABASE {name} TEMPLATE {MIGRATED if migrated else EMPTY}")
        return self.url(name)

    def create_template(self, url: str) -> str:
        """A copy of the database at `url` (whose connections must be closed) as a new database; its URL."""
        name = next(self._names)
        self.admin.execute(f"CREATE DATABASE {name} TEMPLATE {url.rsplit('/', 1)[1]}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database at `url`, ending any connection a test left open."""
        self.admin.execute(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")

    def stop(self) -> None:
        """Stop the server at once and delete its folder (twice is once)."""
        if self.admin is not None:
            self.admin.close()
            self.admin = None
        if (self.root / "data" / "postmaster.pid").exists():
            subprocess.run(self._stop_command(), capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None

    def _stop_command(self) -> list[str]:
        return [*self._as_postgres, str(self.bindir / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate",
                "-w", "stop"]


@pytest.fixture(scope="session")
def postgres_server():
    """The session's PostgreSQL server (started on first use); a failure in CI without the binaries."""
    bindir = find_bindir()
    if bindir is None:
        message = f"PostgreSQL binaries not found ({BIN_GLOB}/initdb, pg_config, PATH): {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail("CI must test PostgreSQL too; " + message, pytrace=False)
        pytest.skip(message)
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()
