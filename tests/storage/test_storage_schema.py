"""Opening the database: URLs and paths, pragmas, the schema and its Alembic revisions, on SQLite and
PostgreSQL (the fixtures of conftest); SQLite files, paths and pragmas on SQLite.

Adopting old databases: SQLite files written by earlier versions (v1, v3: their SQL), a database at
version 6 made by the revisions of that time, and one made by the code from before Alembic at
today's schema (schema_version only, no alembic_version), with its data intact on both engines.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from conftest import new_db_url, rows, snapshot, sqlite_only
from labeler.errors import StorageError
from labeler.golden import GoldenQuery, GoldenSet, serialize_golden_jsonl
from labeler_storage import Store, default_db_url, normalize_db_url, open_store
from labeler_storage import migrations as M
from labeler_storage import schema as S

ALL_VERSIONS = list(range(1, M.LATEST_VERSION + 1))


@pytest.mark.parametrize("home, folder", [("home", "home"), (None, ".labeler")])
def test_default_db_url_is_under_labeler_home_created_on_first_use(tmp_path, monkeypatch, home, folder):
    monkeypatch.chdir(tmp_path)
    if home is None:
        monkeypatch.delenv("LABELER_HOME", raising=False)
    else:
        monkeypatch.setenv("LABELER_HOME", str(tmp_path / home))
    assert default_db_url() == "sqlite:///" + str(tmp_path / folder / "labeler.db")
    with open_store() as s:
        s.questions.add("Where is the office?")
    assert (tmp_path / folder / "labeler.db").is_file()


def test_default_db_url_is_labeler_db_url_when_set(monkeypatch, db_url):
    monkeypatch.setenv("LABELER_DB_URL", db_url)
    assert default_db_url() == normalize_db_url(None) == db_url
    with open_store() as s:
        assert s.url == db_url
        s.questions.add("Where is the office?")
    with open_store(db_url) as s:
        assert [q.query_id for q in s.questions.index()] == ["q-0001"]


def test_cli_imports_and_exports_through_labeler_db_url(db_url, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from labeler.golden import read_golden
    from labeler_edge.cli import cli

    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"query_id": "a", "question": "A?", "relevance": {"d1": 1}}\n', encoding="utf-8")
    monkeypatch.setenv("LABELER_DB_URL", db_url)
    imported = CliRunner().invoke(cli, ["import", str(golden)])
    assert imported.exit_code == 0, imported.output
    exported = CliRunner().invoke(cli, ["export", str(tmp_path / "out.jsonl")])
    assert exported.exit_code == 0, exported.output
    assert read_golden(tmp_path / "out.jsonl").get("a").relevance == {"d1": 1}
    with open_store(db_url) as s:
        assert s.questions.get("a").question == "A?"
    assert not (tmp_path / "labeler-home" / "labeler.db").exists()  # LABELER_HOME's file was not used


@pytest.mark.parametrize("given, url", [
    ("postgresql://ann:pw@db.example.org:5433/labels", "postgresql+psycopg://ann:pw@db.example.org:5433/labels"),
    ("postgres://ann@db/labels", "postgresql+psycopg://ann@db/labels"),
    ("postgresql+psycopg://ann@db/labels", "postgresql+psycopg://ann@db/labels"),
])
def test_postgresql_urls_use_psycopg_3(given, url, monkeypatch):
    assert normalize_db_url(given) == url
    monkeypatch.setenv("LABELER_DB_URL", given)
    assert default_db_url() == url


def test_unreachable_postgresql_is_one_line_with_a_hint_and_no_password():
    port = _closed_port()
    with pytest.raises(StorageError) as err:
        open_store(f"postgresql://ann:secret-pw@127.0.0.1:{port}/labels")
    message = str(err.value)
    assert "secret-pw" not in message and "***" in message and "\n" not in message
    assert "Hint: check the host and port" in message


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the socket is: nothing listens there


@sqlite_only
def test_open_store_sets_wal_foreign_keys_and_busy_timeout(store):
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 30_000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_schema_migrations_build_exactly_the_schema_constant(empty_db_url):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    with open_store(empty_db_url) as store:
        assert store.schema_version() == M.LATEST_VERSION
        inspector = sa.inspect(store.engine)
        assert set(inspector.get_table_names()) == set(S.SCHEMA.tables) | {"alembic_version"}
        for name, table in S.SCHEMA.tables.items():
            assert {c["name"] for c in inspector.get_columns(name)} == {c.name for c in table.columns}, name
            assert {i["name"] for i in inspector.get_indexes(name)} >= {i.name for i in table.indexes}, name
        with store.engine.connect() as conn:
            # Alembic's own comparison: types, nullability, indexes, unique constraints, foreign keys (and, on
            # PostgreSQL, server defaults: SQLite reflects a '' default as the text "''").
            pg = conn.dialect.name == "postgresql"
            context = MigrationContext.configure(conn, opts={"compare_type": True, "compare_server_default": pg})
            assert compare_metadata(context, S.SCHEMA) == []
    assert rows(empty_db_url, "SELECT version_num FROM alembic_version") == [(M.revision_of(M.LATEST_VERSION),)]
    # One marker: alembic_version (no schema_version table is made any more), and the head it points
    # at is the one Alembic reads from the revision files, which LATEST_VERSION is derived from.
    assert "schema_version" not in snapshot(empty_db_url)
    assert M.script_directory().get_current_head() == M.revision_of(M.LATEST_VERSION)
    assert [r.revision for r in M.script_directory().walk_revisions()] == [
        M.revision_of(v) for v in range(M.LATEST_VERSION, 0, -1)]


V1_SQL = """
CREATE TABLE collections (id INTEGER NOT NULL, name TEXT NOT NULL, corpus_path TEXT,
    corpus_fingerprint TEXT, created_at TEXT NOT NULL, PRIMARY KEY (id), UNIQUE (name));
CREATE TABLE questions (id INTEGER NOT NULL, collection_id INTEGER NOT NULL, query_id TEXT NOT NULL,
    text TEXT NOT NULL, query_type TEXT DEFAULT '' NOT NULL, unanswerable BOOLEAN DEFAULT 0 NOT NULL,
    notes TEXT DEFAULT '' NOT NULL, author TEXT DEFAULT '' NOT NULL, created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL, extra TEXT DEFAULT '{}' NOT NULL, PRIMARY KEY (id),
    CONSTRAINT uq_questions_collection_query UNIQUE (collection_id, query_id),
    FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE);
CREATE TABLE runs (id INTEGER NOT NULL, collection_id INTEGER NOT NULL, config TEXT NOT NULL,
    config_hash TEXT NOT NULL, golden_hash TEXT NOT NULL, corpus_fingerprint TEXT, summary TEXT NOT NULL,
    per_query TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (id),
    FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE);
CREATE INDEX ix_runs_collection_created ON runs (collection_id, created_at);
CREATE TABLE judgments (id INTEGER NOT NULL, question_id INTEGER NOT NULL, doc_id TEXT NOT NULL,
    grade INTEGER NOT NULL, annotator TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (id), CONSTRAINT uq_judgments_question_doc_annotator UNIQUE (question_id, doc_id, annotator),
    FOREIGN KEY(question_id) REFERENCES questions (id) ON DELETE CASCADE);
CREATE TABLE schema_version (version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL,
    PRIMARY KEY (version));
INSERT INTO schema_version VALUES (1, 'base tables: collections, questions, judgments, runs', '2026-01-02T03:04:05Z');
INSERT INTO collections VALUES (1, 'handbook', 'corpus.jsonl', 'sha256:old', '2026-01-02T03:04:05Z');
INSERT INTO questions VALUES (1, 1, 'q-0001', 'How many vacation days?', 'numeric-fact', 0, 'see §4', 'asha',
    '2026-01-02T03:04:05Z', '2026-01-02T03:05:00Z', '{"source": "slack"}');
INSERT INTO questions VALUES (2, 1, 'q-0002', 'Who is on Mars?', '', 1, '', 'ben',
    '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z', '{}');
INSERT INTO judgments VALUES (1, 1, 'leave-001', 3, 'asha', '2026-01-02T03:06:00Z', '2026-01-02T03:06:00Z');
INSERT INTO judgments VALUES (2, 1, 'leave-001', 2, 'ben', '2026-01-02T03:07:00Z', '2026-01-02T03:07:00Z');
INSERT INTO judgments VALUES (3, 1, 'leave-002', 0, 'asha', '2026-01-02T03:06:30Z', '2026-01-02T03:06:30Z');
INSERT INTO runs VALUES (1, 1, '{"model": "m"}', 'abc123', 'sha256:g', 'sha256:old', '{"ndcg@10": 0.5}',
    '{"q-0001": {"ndcg@10": 0.5}}', '2026-01-02T04:00:00Z');
"""


def _old_database(path, sql: str):
    """A database file made by an earlier version's SQL, and a snapshot of its rows."""
    con = sqlite3.connect(path)
    con.executescript(sql)
    con.close()
    return path, snapshot(path)


def test_open_store_adopts_v1_database_with_data_intact(tmp_path):
    db, before = _old_database(tmp_path / "old.db", V1_SQL)

    with open_store(db) as s:
        assert s.schema_version() == M.LATEST_VERSION
        statuses = s.questions.list(collection="handbook")
        assert [x.question.query_id for x in statuses] == ["q-0001", "q-0002"]
        q1 = statuses[0]
        assert q1.question.extra == {"source": "slack"} and q1.question.notes == "see §4"
        assert q1.question.annotators == () and q1.question.corpus_fingerprint is None  # v3 defaults
        assert q1.consensus == {"leave-001": 2, "leave-002": 0}  # floor(median(3, 2)) = 2
        assert all(j.note == "" for j in q1.judgments)  # v2 default
        assert statuses[1].status == "unanswerable"
        [run] = s.runs.list(collection="handbook")
        assert run.name == "" and s.runs.load(run.run_id).per_query == {"q-0001": {"ndcg@10": 0.5}}
        # The upgraded database takes writes through the new columns.
        s.judgments.set("q-0001", "leave-002", 1, annotator="ben", note="partly", collection="handbook")
        golden = s.golden.export(collection="handbook")
        assert golden.get("q-0001").corpus_fingerprint == "sha256:old"

    after = snapshot(db)
    assert after["schema_version"] == before["schema_version"]  # the old marker kept as it was, not written
    assert after["alembic_version"] == [(M.revision_of(M.LATEST_VERSION),)]
    # Every old row is still there, its old columns unchanged (new columns appended at the end).
    for table in ("collections", "runs"):
        assert [row[:len(before[table][0])] for row in after[table]] == before[table]
    old_judgments = {r[0]: r for r in before["judgments"]}
    assert all(row[:7] == old_judgments[row[0]] for row in after["judgments"] if row[0] in old_judgments)


def test_open_store_is_idempotent(empty_db_url):
    with open_store(empty_db_url) as s:
        assert s.migrate() == [] and s.schema_version() == M.LATEST_VERSION
    with open_store(empty_db_url) as s:
        assert s.migrate() == [] and s.schema_version() == M.LATEST_VERSION


def test_stores_opening_one_new_database_at_once_migrate_it_once(empty_db_url):
    # App replicas (or CLI runs) starting together on an empty database: one migrates, the others wait
    # (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock) and then find it up to date.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: open_store(empty_db_url), range(4)))
    assert all(s.schema_version() == M.LATEST_VERSION for s in stores)
    for s in stores:
        s.close()
    assert rows(empty_db_url, "SELECT version_num FROM alembic_version") == [(M.revision_of(M.LATEST_VERSION),)]


def test_databases_migrating_one_new_database_at_once_apply_each_revision_once(empty_db_url):
    from concurrent.futures import ThreadPoolExecutor

    from labeler_storage import normalize_db_url
    from labeler_storage.engine import Database

    databases = [Database(normalize_db_url(empty_db_url)) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        applied = list(pool.map(lambda db: db.migrate(), databases))
    for db in databases:
        db.close()
    assert sorted(applied) == [[], [], [], ALL_VERSIONS]


def _newer_schema(url):
    """A database whose pre-Alembic marker says a newer labeler took it further."""
    open_store(url).close()
    rows(url, "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    rows(url, "INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01T00:00:00Z')")


def _newer_revision(url):
    open_store(url).close()
    rows(url, "UPDATE alembic_version SET version_num = '0099'")


def _not_our_revision(url):
    open_store(url).close()
    rows(url, "UPDATE alembic_version SET version_num = 'ae1027a6acf'")


def _foreign_tables(url):
    rows(url, "CREATE TABLE questions (x integer)")


def _someone_elses_tables(url):
    rows(url, "CREATE TABLE foo (x integer)")


def _someone_elses_alembic(url):
    rows(url, "CREATE TABLE alembic_version (version_num varchar(32) NOT NULL)")
    rows(url, "INSERT INTO alembic_version VALUES ('ae1027a6acf')")


@pytest.mark.parametrize("make, message", [
    (_newer_schema, "schema version 99.*Hint: upgrade"),
    (_newer_revision, "schema version 99.*Hint: upgrade"),
    (_not_our_revision, "Alembic revision 'ae1027a6acf', which is not one of the labeler's.*Hint:"),
    (_foreign_tables, "holds tables \\(questions\\) but is not a labeler database.*Hint:"),
    (_someone_elses_tables, "holds tables \\(foo\\) but is not a labeler database.*Hint:"),
    (_someone_elses_alembic, "Alembic revision 'ae1027a6acf', which is not one of the labeler's.*Hint:"),
])
def test_open_store_refuses_database_it_cannot_use(empty_db_url, make, message):
    make(empty_db_url)
    # Rows, not bytes, for a SQLite file: opening it switches the journal to WAL before the check.
    before = snapshot(empty_db_url)
    with pytest.raises(StorageError, match=message):
        open_store(empty_db_url)
    assert snapshot(empty_db_url) == before


def test_open_store_refuses_a_file_that_is_not_sqlite(tmp_path):
    db = tmp_path / "x.db"
    db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError, match="not a database.*Hint:"):
        open_store(db)
    assert db.read_bytes() == b"this is not sqlite" * 100


def test_open_store_bad_url_is_storage_error():
    with pytest.raises(StorageError, match="Hint:"):
        open_store("nosuchdialect://x/y")


# --------------------------------------------------------------------------- database paths


@pytest.mark.parametrize("where, message", [
    ("missing/labeler.db", "database folder does not exist.*Hint: create it"),
    ("sqlite:///{tmp}/missing/labeler.db", "database folder does not exist"),
    ("file.txt/labeler.db", "is a regular file.*Hint:"),
    ("file.txt/sub/labeler.db", "under a regular file.*Hint:"),
    ("folder", "database path is a folder.*Hint:"),
])
def test_open_store_refuses_bad_db_path_and_creates_nothing(tmp_path, where, message):
    (tmp_path / "file.txt").write_text("not a folder")
    (tmp_path / "folder").mkdir()
    before = sorted(tmp_path.rglob("*"))
    target = where.format(tmp=tmp_path) if where.startswith("sqlite:") else tmp_path / where
    with pytest.raises(StorageError, match=message) as err:
        open_store(target)
    assert str(err.value).startswith(str(tmp_path))  # the message names the path
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("home", ["file.txt", "file.txt/home"])
def test_open_store_refuses_data_directory_at_or_under_a_file(tmp_path, monkeypatch, home):
    (tmp_path / "file.txt").write_text("not a folder")
    monkeypatch.setenv("LABELER_HOME", str(tmp_path / home))
    with pytest.raises(StorageError, match="cannot create the data directory.*Hint: set LABELER_HOME") as err:
        open_store()
    assert str(tmp_path / "file.txt") in str(err.value)
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "file.txt"]


@pytest.mark.parametrize("via", ["db", "home"])
def test_open_store_refuses_unwritable_folder(tmp_path, monkeypatch, via):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    if os.geteuid() == 0:  # root writes anywhere: stand in for a user whom os.access refuses
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: real_access(p, mode) and not (
            Path(p) == folder and mode & os.W_OK))
    try:
        monkeypatch.setenv("LABELER_HOME", str(folder))
        with pytest.raises(StorageError, match="not writable.*Hint:") as err:
            open_store(folder / "labeler.db" if via == "db" else None)
        assert str(folder) in str(err.value) and list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_cli_import_with_db_under_a_file_exits_2_with_one_line(tmp_path):
    from click.testing import CliRunner

    from labeler_edge.cli import cli

    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"query_id": "a", "question": "A?", "relevance": {"d1": 1}}\n', encoding="utf-8")
    (tmp_path / "file.txt").write_text("not a folder")
    result = CliRunner().invoke(cli, ["import", str(golden), "--db", str(tmp_path / "file.txt" / "labeler.db")])
    assert result.exit_code == 2, result.output
    assert "is a regular file" in result.output and "Hint:" in result.output
    assert sorted(tmp_path.iterdir()) == [tmp_path / "file.txt", golden]


# A database written by the version-3 code (storage/store.py before the v4 migration): a
# collection with an imported question (credited annotator, unknown field), a person's grades
# beside the imported ones, an unanswerable question, a second collection and a named run.
# Made with open_store + import_golden/add_question/set_judgment/save_run, dumped with iterdump.
V3_SQL = """
BEGIN TRANSACTION;
CREATE TABLE collections (
	id INTEGER NOT NULL, 
	name TEXT NOT NULL, 
	corpus_path TEXT, 
	corpus_fingerprint TEXT, 
	created_at TEXT NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
INSERT INTO "collections" VALUES(1,'handbook','corpus.jsonl','sha256:c3','2026-12-01T02:14:44Z');
INSERT INTO "collections" VALUES(2,'other',NULL,NULL,'2026-12-01T02:14:44Z');
CREATE TABLE judgments (
	id INTEGER NOT NULL, 
	question_id INTEGER NOT NULL, 
	doc_id TEXT NOT NULL, 
	grade INTEGER NOT NULL, 
	annotator TEXT NOT NULL, 
	created_at TEXT NOT NULL, 
	updated_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', 
	PRIMARY KEY (id), 
	CONSTRAINT uq_judgments_question_doc_annotator UNIQUE (question_id, doc_id, annotator), 
	FOREIGN KEY(question_id) REFERENCES questions (id) ON DELETE CASCADE
);
INSERT INTO "judgments" VALUES(1,1,'leave-001',2,'(import)','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','');
INSERT INTO "judgments" VALUES(2,1,'leave-002',0,'(import)','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','');
INSERT INTO "judgments" VALUES(3,1,'leave-001',3,'asha','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','full answer');
INSERT INTO "judgments" VALUES(4,1,'leave-002',1,'asha','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','');
INSERT INTO "judgments" VALUES(5,2,'mars-1',0,'ben','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','');
CREATE TABLE questions (
	id INTEGER NOT NULL, 
	collection_id INTEGER NOT NULL, 
	query_id TEXT NOT NULL, 
	text TEXT NOT NULL, 
	query_type TEXT DEFAULT '' NOT NULL, 
	unanswerable BOOLEAN DEFAULT 0 NOT NULL, 
	notes TEXT DEFAULT '' NOT NULL, 
	author TEXT DEFAULT '' NOT NULL, 
	created_at TEXT NOT NULL, 
	updated_at TEXT NOT NULL, 
	extra TEXT DEFAULT '{}' NOT NULL, credited_annotators TEXT NOT NULL DEFAULT '[]', corpus_fingerprint TEXT, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_questions_collection_query UNIQUE (collection_id, query_id), 
	FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE
);
INSERT INTO "questions" VALUES(1,1,'q-0001','How many vacation days?','numeric-fact',0,'see §4','','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','{"reviewer": {"round": 2}}','["zoe"]',NULL);
INSERT INTO "questions" VALUES(2,1,'q-0002','Who is on Mars?','',1,'','ben','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','{}','[]','sha256:c3');
INSERT INTO "questions" VALUES(3,2,'o1','Other?','',0,'','','2026-12-01T02:14:44Z','2026-12-01T02:14:44Z','{}','[]',NULL);
CREATE TABLE runs (
	id INTEGER NOT NULL, 
	collection_id INTEGER NOT NULL, 
	config TEXT NOT NULL, 
	config_hash TEXT NOT NULL, 
	golden_hash TEXT NOT NULL, 
	corpus_fingerprint TEXT, 
	summary TEXT NOT NULL, 
	per_query TEXT NOT NULL, 
	created_at TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', 
	PRIMARY KEY (id), 
	FOREIGN KEY(collection_id) REFERENCES collections (id) ON DELETE CASCADE
);
INSERT INTO "runs" VALUES(1,1,'{"model": "m"}','548f58d1c36c','sha256:g',NULL,'{"ndcg@10": 0.5}','{"q-0001": {"ndcg@10": 0.5}}','2026-12-01T02:14:44Z','baseline');
CREATE TABLE schema_version (
	version INTEGER NOT NULL, 
	name TEXT NOT NULL, 
	applied_at TEXT NOT NULL, 
	PRIMARY KEY (version)
);
INSERT INTO "schema_version" VALUES(1,'base tables: collections, questions, judgments, runs','2026-12-01T02:14:44Z');
INSERT INTO "schema_version" VALUES(2,'judgments.note and runs.name','2026-12-01T02:14:44Z');
INSERT INTO "schema_version" VALUES(3,'questions.credited_annotators, questions.corpus_fingerprint, judgments by annotator','2026-12-01T02:14:44Z');
CREATE INDEX ix_runs_collection_created ON runs (collection_id, created_at);
CREATE INDEX ix_judgments_annotator ON judgments (annotator);
COMMIT;
"""
# What the version-3 code exported for collection "handbook" of that database, as this code exports it:
# every grade and vote now under its giver (`annotations`, `unanswerable_votes`), and the consensus of
# leave-001 and leave-002 is asha's (3, 1), since a file's imported grade no longer outvotes a person's
# (v3 exported the median with the imported 2 and 0).
V3_EXPORT = (
    '{"query_id": "q-0001", "question": "How many vacation days?", "query_type": "numeric-fact", '
    '"unanswerable": false, "relevance": {"leave-001": 3, "leave-002": 1}, "annotators": ["zoe", "asha"], '
    '"notes": "see §4", "created_at": "2026-12-01T02:14:44Z", "updated_at": "2026-12-01T02:14:44Z", '
    '"corpus_fingerprint": "sha256:c3", "annotation_notes": {"asha": {"leave-001": "full answer"}}, '
    '"annotations": {"(import)": {"leave-001": 2, "leave-002": 0}, "asha": {"leave-001": 3, "leave-002": 1}}, '
    '"grade_sources": {"(import)": {"file": "", "imported_at": "", "imported_by": "", "counted": true, '
    '"changes": []}}, "reviewer": {"round": 2}}\n'
    '{"query_id": "q-0002", "question": "Who is on Mars?", "query_type": "", "unanswerable": true, '
    '"relevance": {"mars-1": 0}, "annotators": ["ben"], "notes": "", "created_at": "2026-12-01T02:14:44Z", '
    '"updated_at": "2026-12-01T02:14:44Z", "corpus_fingerprint": "sha256:c3", "annotations": {"ben": {"mars-1": 0}}, '
    '"grade_sources": {"(import)": {"file": "", "imported_at": "", "imported_by": "", "counted": true, '
    '"changes": []}}, "unanswerable_votes": {"(import)": true, "ben": false}}\n'
)


def test_open_store_adopts_v3_database_with_data_intact(tmp_path):
    db, before = _old_database(tmp_path / "v3.db", V3_SQL)

    with open_store(db) as s:
        assert s.schema_version() == M.LATEST_VERSION
        assert serialize_golden_jsonl(s.golden.export(collection="handbook")) == V3_EXPORT
        assert [(x.query_id, x.status, x.n_judged, x.annotators) for x in s.questions.index(collection="handbook", with_annotators=True)] == [
            ("q-0001", "done", 2, ("asha",)), ("q-0002", "unanswerable", 1, ("ben",))]
        assert s.collections.revision(collection="handbook") == s.collections.revision(collection="other") == 1  # 0: no such collection
        [run] = s.runs.list(collection="handbook")
        assert (run.name, s.runs.load(run.run_id).per_query) == ("baseline", {"q-0001": {"ndcg@10": 0.5}})
        s.judgments.set("q-0001", "leave-002", 2, annotator="ben", collection="handbook")
        assert s.collections.revision(collection="handbook") == 2

    after = snapshot(db)
    assert after["schema_version"] == before["schema_version"]  # the old marker kept as it was, not written
    assert after["alembic_version"] == [(M.revision_of(M.LATEST_VERSION),)]
    # Every old row is still there with its old columns unchanged; new columns are appended
    # (v4: revision; v6: corpus_set_by/at, questions.updated_by, runs.created_by; v8: runs.corpus_path and
    # corpus_version, judgments.doc_hash; v11: questions.touched).
    assert [row[:len(before["collections"][0])] for row in after["collections"]] == before["collections"]
    assert [row[:len(before["runs"][0])] for row in after["runs"]] == before["runs"]
    updated_at = 9  # the one column the new judgment changes (of q-0001)
    assert [r[:updated_at] + r[updated_at + 1:-2] for r in after["questions"]] == [
        r[:updated_at] + r[updated_at + 1:] for r in before["questions"]]
    assert set(before["judgments"]) < {row[:len(before["judgments"][0])] for row in after["judgments"]}


def test_v7_turns_each_unanswerable_flag_into_one_vote(empty_db_url):
    # A database at version 6 (made by the revisions up to 6) with two flagged questions: one marked
    # by asha in the app (updated_by), one from before v6 (no one recorded).
    from labeler_storage.engine import Database

    db = Database(empty_db_url)
    with db.write() as conn:
        assert M.upgrade(conn, 6) == [1, 2, 3, 4, 5, 6]
        conn.execute(sa.text("INSERT INTO collections (name, created_at, revision) VALUES ('default', 't', 1)"))
        conn.execute(sa.text(
            "INSERT INTO questions (collection_id, query_id, text, unanswerable, created_at, updated_at, updated_by) "
            "SELECT id, 'a', 'A?', TRUE, 't', 't', 'asha' FROM collections UNION ALL "
            "SELECT id, 'b', 'B?', TRUE, 't', 't', '' FROM collections UNION ALL "
            "SELECT id, 'c', 'C?', FALSE, 't', 't', '' FROM collections"))
    db.close()
    with open_store(empty_db_url) as s:
        assert s.schema_version() == M.LATEST_VERSION
        assert [(x.question.query_id, x.voters, x.status) for x in s.questions.list()] == [
            ("a", ("asha",), "unanswerable"), ("b", ("(import)",), "unanswerable"), ("c", (), "new")]
        assert s.judgments.judged_by("asha") == {"a": 0}


def _ann_signed_in_at(url: str, version: int, token_hash: str) -> None:
    """A database at `version` (made by the revisions up to it) with a user and her session."""
    from labeler_storage.engine import Database

    db = Database(url)
    with db.write() as conn:
        assert M.upgrade(conn, version) == list(range(1, version + 1))
        conn.execute(sa.text("INSERT INTO users (email, name, role, created_at, updated_at) "
                             "VALUES ('ann@example.org', 'Ann', 'annotator', 't', 't')"))
        conn.execute(sa.text("INSERT INTO sessions (token_hash, user_id, created_at, expires_at) "
                             "SELECT :h, id, 't', '9999' FROM users"), {"h": token_hash})
    db.close()


def test_v13_adopts_the_accounts_of_v12_unbound(empty_db_url):
    _ann_signed_in_at(empty_db_url, 12, "h")
    with open_store(empty_db_url) as s:
        assert s.schema_version() == M.LATEST_VERSION
        ann = s.accounts.get_user("ann@example.org")
        assert (ann.name, ann.role, ann.oidc_subject) == ("Ann", "annotator", None)
        assert s.accounts.bind_subject("ann@example.org", "idp ann-1").oidc_subject == "idp ann-1"
    assert rows(empty_db_url, "SELECT token_hash FROM sessions") == [("h",)]


def test_v14_adopts_the_sessions_of_v13_with_no_client_so_no_cookie(empty_db_url):
    from labeler.passwords import token_digest

    _ann_signed_in_at(empty_db_url, 13, token_digest("t"))  # her token "t", stored as its digest
    with open_store(empty_db_url) as s:
        assert s.schema_version() == M.LATEST_VERSION
        assert s.accounts.session_user("t").email == "ann@example.org"  # the open tab stays signed in
        assert s.accounts.session_user("t", "loopback ") is None  # but no cookie brings it back
        assert s.accounts.exchange_code(s.accounts.new_code("t"), "loopback ") is None
    assert rows(empty_db_url, "SELECT client_hash, code_hash, cookie_hash FROM sessions") == [(None, None, None)]


def _written_by_todays_code(url: str, tmp_path: Path) -> None:
    """Every kind of row the store writes: collections with a corpus version, questions, grades and a
    regrade (history), votes, a run, a user with a session, a team setting."""
    from labeler.corpus import load_corpus
    from labeler.paths import SAMPLE_CORPUS

    corpus = load_corpus(SAMPLE_CORPUS)
    with open_store(url) as s:
        s.collections.ensure(corpus_path=str(SAMPLE_CORPUS), corpus=corpus, by="asha")
        q = s.questions.add("How many vacation days?", author="asha", query_type="numeric-fact").query_id
        s.judgments.set(q, "leave-001", 2, annotator="asha", doc=corpus.get("leave-001"), note="§4")
        s.judgments.set(q, "leave-001", 3, annotator="asha", doc=corpus.get("leave-001"))
        s.judgments.set(q, "leave-002", 0, annotator="ben")
        s.questions.add("Who is on Mars?", query_id="mars", author="ben")
        s.questions.set_unanswerable("mars", by="ben")
        s.questions.add("Other?", collection="other")
        s.runs.save({"model": "m"}, summary={"ndcg@10": 0.5}, per_query={q: {"ndcg@10": 0.5}}, golden_hash="g",
                   corpus_fingerprint=corpus.fingerprint, name="baseline", by="asha")
        s.accounts.add_user("boss@example.org", "admin", by="(test)")
        s.accounts.set_setting("session_hours", 8, by="boss@example.org")


def _back_to_version_8(url: str, scratch_url: str) -> None:
    """Make a database of the latest schema what the code from before Alembic left at version 8: no
    alembic_version, schema_version 1-8, and what later revisions added (tables, columns, indexes,
    PostgreSQL's 64-bit grades) taken away, by the shape of a scratch database migrated up to 8."""
    from labeler_storage.engine import Database

    scratch = Database(scratch_url)
    with scratch.write() as conn:
        M.upgrade(conn, 8)
    with scratch.read() as conn:
        v8 = sa.inspect(conn)
        shape = {t: ({c["name"]: str(c["type"]) for c in v8.get_columns(t)}, {i["name"] for i in v8.get_indexes(t)})
                 for t in v8.get_table_names() if t != "alembic_version"}
    scratch.close()
    db = Database(url)
    with db.write() as conn:
        now = sa.inspect(conn)
        for table in now.get_table_names():
            if table not in shape:
                conn.execute(sa.text(f'DROP TABLE "{table}"'))
                continue
            columns, indexes = shape[table]
            for index in {i["name"] for i in now.get_indexes(table)} - indexes:
                conn.execute(sa.text(f'DROP INDEX "{index}"'))
            for column in now.get_columns(table):
                if column["name"] not in columns:
                    conn.execute(sa.text(f'ALTER TABLE "{table}" DROP COLUMN "{column["name"]}"'))
                elif conn.dialect.name == "postgresql" and str(column["type"]) != columns[column["name"]]:
                    conn.execute(sa.text(f'ALTER TABLE "{table}" ALTER COLUMN "{column["name"]}" '
                                         f'TYPE {columns[column["name"]]}'))
        # The marker that code kept (this code writes none): versions 1-8, each with its name.
        conn.execute(sa.text("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                             "applied_at TEXT NOT NULL)"))
        for version in range(1, 9):
            doc = M.script_directory().get_revision(M.revision_of(version)).doc
            conn.execute(sa.text("INSERT INTO schema_version VALUES (:v, :n, '2026-11-01T00:00:00Z')"),
                         {"v": version, "n": doc})
    db.close()


def test_a_database_of_todays_schema_from_before_alembic_is_stamped_and_upgraded_with_data_intact(
        request, db_engine, empty_db_url, tmp_path):
    _written_by_todays_code(empty_db_url, tmp_path)
    # The checkout before Alembic, at schema version 8 (which is "today's" schema for that code).
    _back_to_version_8(empty_db_url, new_db_url(request, db_engine, tmp_path / "v8.db", migrated=False))
    before = snapshot(empty_db_url)
    assert "alembic_version" not in before and sorted(r[0] for r in before["schema_version"]) == list(range(1, 9))
    with Store(empty_db_url) as old:  # the database as it is (a Store() does not migrate)
        exported = serialize_golden_jsonl(old.golden.export())

    with Store(empty_db_url) as s:  # recognised: stamped at 8, not recreated; then 9 and on run
        assert s.migrate() == list(range(9, M.LATEST_VERSION + 1)) and s.schema_version() == M.LATEST_VERSION
        assert serialize_golden_jsonl(s.golden.export()) == exported
        assert s.accounts.settings()["session_hours"] == 8.0 and s.judgments.history("q-0001")[0].note == "§4"
        s.judgments.set("q-0001", "leave-003", 1, annotator="ben")  # a write through the upgraded schema
    after = snapshot(empty_db_url)
    assert after["schema_version"] == before["schema_version"]  # kept as that code wrote it, not written again
    assert after["alembic_version"] == [(M.revision_of(M.LATEST_VERSION),)]
    unchanged = set(before) - {"schema_version", "collections", "judgments", "questions", "users"}
    assert {t: after[t] for t in unchanged} == {t: before[t] for t in unchanged}
    assert set(before["judgments"]) < set(after["judgments"])
    assert after["users"] == [r + (None,) for r in before["users"]]  # 13: no OpenID identity bound yet
    if db_engine == "postgresql":  # 9 widened the grades: a 64-bit scale fits now
        with open_store(empty_db_url) as s:
            s.golden.import_set(GoldenSet((GoldenQuery("big", "B?", relevance={"d": 2 ** 63 - 1}),)))
            assert s.golden.export().get("big").relevance == {"d": 2 ** 63 - 1}


def test_v17_adopts_the_import_grades_of_v15_as_one_counted_source(empty_db_url):
    # A database at version 15 where a consensus-only file's grades and vote are "(import)"'s, beside asha's.
    from labeler_storage.engine import Database

    db = Database(empty_db_url)
    with db.write() as conn:
        assert M.upgrade(conn, 15) == list(range(1, 16))
        conn.execute(sa.text("INSERT INTO collections (name, created_at, revision) VALUES ('default', 't', 1), "
                             "('other', 't', 1)"))
        conn.execute(sa.text(
            "INSERT INTO questions (collection_id, query_id, text, unanswerable, created_at, updated_at) "
            "SELECT id, 'a', 'A?', FALSE, 't', 't' FROM collections WHERE name = 'default' UNION ALL "
            "SELECT id, 'm', 'Mars?', TRUE, 't', 't' FROM collections WHERE name = 'default' UNION ALL "
            "SELECT id, 'o', 'O?', FALSE, 't', 't' FROM collections WHERE name = 'other'"))
        conn.execute(sa.text(
            "INSERT INTO judgments (question_id, doc_id, grade, annotator, created_at, updated_at) "
            "SELECT id, 'd1', 3, '(import)', 't', 't' FROM questions WHERE query_id = 'a' UNION ALL "
            "SELECT id, 'd2', 2, '(import)', 't', 't' FROM questions WHERE query_id = 'a' UNION ALL "
            "SELECT id, 'd1', 0, 'asha', 't', 't' FROM questions WHERE query_id = 'a' UNION ALL "
            "SELECT id, 'd1', 1, 'ben', 't', 't' FROM questions WHERE query_id = 'o'"))
        conn.execute(sa.text("INSERT INTO unanswerable_votes (question_id, annotator, created_at) "
                             "SELECT id, '(import)', 't' FROM questions WHERE query_id = 'm'"))
    db.close()
    with open_store(empty_db_url) as s:
        assert s.schema_version() == M.LATEST_VERSION
        [source] = s.sources.list()
        assert (source.name, source.file_name, source.counted, source.n_grades) == ("(import)", "", True, 2)
        assert s.sources.list(collection="other") == []
        # Counted as before: only where no person graded (asha's 0 on d1 stands).
        assert s.judgments.consensus().qrels == {"a": {"d1": 0, "d2": 2}}
        assert [(x.question.query_id, str(x.status)) for x in s.questions.list()] == [("a", "done"),
                                                                                   ("m", "unanswerable")]
        exported = s.golden.export().get("a").extra
        assert exported["grade_sources"] == {"(import)": {"file": "", "imported_at": "", "imported_by": "",
                                                          "counted": True, "changes": []}}
        s.sources.set_counted("(import)", False, by="lead")
        assert s.judgments.consensus().qrels == {"a": {"d1": 0}} and not s.questions.get("m").unanswerable
