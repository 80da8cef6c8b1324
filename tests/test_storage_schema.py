"""Opening the database: URLs and paths, pragmas, the schema and its migrations."""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from conftest import snapshot
from labeler.errors import StorageError
from labeler.golden import serialize_golden_jsonl
from storage import default_db_url, open_store
from storage import migrations as M
from storage import schema as S


@pytest.fixture
def store(tmp_path):
    with open_store(tmp_path / "labeler.db") as s:
        yield s


@pytest.mark.parametrize("home, folder", [("home", "home"), (None, ".labeler")])
def test_default_db_url_is_under_labeler_home_created_on_first_use(tmp_path, monkeypatch, home, folder):
    monkeypatch.chdir(tmp_path)
    if home is None:
        monkeypatch.delenv("LABELER_HOME", raising=False)
    else:
        monkeypatch.setenv("LABELER_HOME", str(tmp_path / home))
    assert default_db_url() == "sqlite:///" + str(tmp_path / folder / "labeler.db")
    with open_store() as s:
        s.add_question("Where is the office?")
    assert (tmp_path / folder / "labeler.db").is_file()


def test_open_store_sets_wal_foreign_keys_and_busy_timeout(store):
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 30_000
        assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL


def test_schema_migrations_build_exactly_the_schema_constant(store):
    inspector = sa.inspect(store.engine)
    assert set(inspector.get_table_names()) == set(S.SCHEMA.tables)
    for name, table in S.SCHEMA.tables.items():
        assert {c["name"] for c in inspector.get_columns(name)} == {c.name for c in table.columns}, name
        assert {i["name"] for i in inspector.get_indexes(name)} >= {i.name for i in table.indexes}, name
    assert store.schema_version() == M.LATEST_VERSION == 8


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
        statuses = s.list_questions(collection="handbook")
        assert [x.question.query_id for x in statuses] == ["q-0001", "q-0002"]
        q1 = statuses[0]
        assert q1.question.extra == {"source": "slack"} and q1.question.notes == "see §4"
        assert q1.question.annotators == () and q1.question.corpus_fingerprint is None  # v3 defaults
        assert q1.consensus == {"leave-001": 2, "leave-002": 0}  # floor(median(3, 2)) = 2
        assert all(j.note == "" for j in q1.judgments)  # v2 default
        assert statuses[1].status == "unanswerable"
        [run] = s.list_runs(collection="handbook")
        assert run.name == "" and s.load_run(run.run_id).per_query == {"q-0001": {"ndcg@10": 0.5}}
        # The upgraded database takes writes through the new columns.
        s.set_judgment("q-0001", "leave-002", 1, annotator="ben", note="partly", collection="handbook")
        golden = s.export_golden(collection="handbook")
        assert golden.get("q-0001").corpus_fingerprint == "sha256:old"

    after = snapshot(db)
    assert [r[0] for r in after["schema_version"]] == list(range(1, M.LATEST_VERSION + 1))
    # Every old row is still there, its old columns unchanged (new columns appended at the end).
    for table in ("collections", "runs"):
        assert [row[:len(before[table][0])] for row in after[table]] == before[table]
    old_judgments = {r[0]: r for r in before["judgments"]}
    assert all(row[:7] == old_judgments[row[0]] for row in after["judgments"] if row[0] in old_judgments)


def test_open_store_is_idempotent(tmp_path):
    open_store(tmp_path / "a.db").close()
    with open_store(tmp_path / "a.db") as s:
        assert s.migrate() == [] and s.schema_version() == M.LATEST_VERSION


def _newer_schema(db):
    open_store(db).close()
    con = sqlite3.connect(db)
    con.execute("INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01T00:00:00Z')")
    con.commit()
    con.close()


def _foreign_tables(db):
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE questions (x)")
    con.close()


def _someone_elses_tables(db):
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE foo (x)")
    con.close()


def _garbage(db):
    db.write_bytes(b"this is not sqlite" * 100)


@pytest.mark.parametrize("make, message", [
    (_newer_schema, "schema version 99.*Hint: upgrade"),
    (_foreign_tables, "holds tables \\(questions\\) but is not a labeler database.*Hint:"),
    (_someone_elses_tables, "holds tables \\(foo\\) but is not a labeler database.*Hint:"),
    (_garbage, "not a database.*Hint:"),
])
def test_open_store_refuses_database_it_cannot_use(tmp_path, make, message):
    db = tmp_path / "x.db"
    make(db)
    # Rows, not bytes, for a SQLite file: opening it switches the journal to WAL before the check.
    content = (lambda: db.read_bytes()) if make is _garbage else (lambda: snapshot(db))
    before = content()
    with pytest.raises(StorageError, match=message):
        open_store(db)
    assert content() == before


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

    from labeler.cli import cli

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
# What the version-3 code exported for collection "handbook" of that database.
V3_EXPORT = (
    '{"query_id": "q-0001", "question": "How many vacation days?", "query_type": "numeric-fact", '
    '"unanswerable": false, "relevance": {"leave-001": 2, "leave-002": 0}, "annotators": ["zoe", "asha"], '
    '"notes": "see §4", "created_at": "2026-12-01T02:14:44Z", "updated_at": "2026-12-01T02:14:44Z", '
    '"corpus_fingerprint": "sha256:c3", "reviewer": {"round": 2}}\n'
    '{"query_id": "q-0002", "question": "Who is on Mars?", "query_type": "", "unanswerable": true, '
    '"relevance": {"mars-1": 0}, "annotators": ["ben"], "notes": "", "created_at": "2026-12-01T02:14:44Z", '
    '"updated_at": "2026-12-01T02:14:44Z", "corpus_fingerprint": "sha256:c3"}\n'
)


def test_open_store_adopts_v3_database_with_data_intact(tmp_path):
    db, before = _old_database(tmp_path / "v3.db", V3_SQL)

    with open_store(db) as s:
        assert s.schema_version() == M.LATEST_VERSION
        assert serialize_golden_jsonl(s.export_golden(collection="handbook")) == V3_EXPORT
        assert [(x.query_id, x.status, x.n_judged, x.annotators) for x in s.question_index(collection="handbook", with_annotators=True)] == [
            ("q-0001", "done", 2, ("asha",)), ("q-0002", "unanswerable", 1, ("ben",))]
        assert s.revision(collection="handbook") == s.revision(collection="other") == 1  # 0: no such collection
        [run] = s.list_runs(collection="handbook")
        assert (run.name, s.load_run(run.run_id).per_query) == ("baseline", {"q-0001": {"ndcg@10": 0.5}})
        s.set_judgment("q-0001", "leave-002", 2, annotator="ben", collection="handbook")
        assert s.revision(collection="handbook") == 2

    after = snapshot(db)
    assert [r[0] for r in after["schema_version"]] == list(range(1, M.LATEST_VERSION + 1))
    # Every old row is still there with its old columns unchanged; new columns are appended
    # (v4: revision; v6: corpus_set_by/at, questions.updated_by, runs.created_by; v8: runs.corpus_path and
    # corpus_version, judgments.doc_hash).
    assert [row[:len(before["collections"][0])] for row in after["collections"]] == before["collections"]
    assert [row[:len(before["runs"][0])] for row in after["runs"]] == before["runs"]
    updated_at = 9  # the one column the new judgment changes (of q-0001)
    assert [r[:updated_at] + r[updated_at + 1:-1] for r in after["questions"]] == [
        r[:updated_at] + r[updated_at + 1:] for r in before["questions"]]
    assert set(before["judgments"]) < {row[:len(before["judgments"][0])] for row in after["judgments"]}


def test_v7_turns_each_unanswerable_flag_into_one_vote(tmp_path):
    # A database at version 6 (made by the migrations of that version) with two flagged questions:
    # one marked by asha in the app (updated_by), one from before v6 (no one recorded).
    db = tmp_path / "v6.db"
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        S.schema_version.create(conn)
        for m in M.MIGRATIONS[:6]:
            m.apply(conn)
            conn.execute(S.schema_version.insert().values(version=m.version, name=m.name, applied_at="t"))
        conn.execute(sa.text("INSERT INTO collections (id, name, created_at, revision) VALUES (1, 'default', 't', 1)"))
        conn.execute(sa.text(
            "INSERT INTO questions (collection_id, query_id, text, unanswerable, created_at, updated_at, updated_by) "
            "VALUES (1, 'a', 'A?', 1, 't', 't', 'asha'), (1, 'b', 'B?', 1, 't', 't', ''), (1, 'c', 'C?', 0, 't', 't', '')"))
    engine.dispose()
    with open_store(db) as s:
        assert s.schema_version() == M.LATEST_VERSION
        assert [(x.question.query_id, x.voters, x.status) for x in s.list_questions()] == [
            ("a", ("asha",), "unanswerable"), ("b", ("(import)",), "unanswerable"), ("c", (), "new")]
        assert s.judged_by("asha") == {"a": 0}
