"""Shared fixtures: every test gets its own data directory; a tiny fake encoder for hand-computed numbers;
a database on each engine (`db_url`, `store`: a SQLite file and a PostgreSQL database, pg_support).

The tests live in one folder per layer: core/, storage/, app/, pages/ (AppTest), browser/ (Chromium)
and cli/ (the edge); the support modules they share (`*_support.py`, the generator of metric cases)
sit here. A test module may import another's fixtures or data by name wherever it lives (names are
unique across the folders)."""
from __future__ import annotations

import os
import re
import sqlite3
import sys
from pathlib import Path

LAYERS = ("core", "storage", "app", "pages", "browser", "cli")
sys.path[:0] = [str(Path(__file__).resolve().parent / layer) for layer in LAYERS]

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

import labeler  # noqa: E402,F401 - sets offline mode (the one place) before any test imports a model library
from pg_support import postgres_server  # noqa: F401 - the session's PostgreSQL server (a fixture)

REPO = Path(__file__).resolve().parents[1]
DATASETS = REPO.parent / "shared" / "datasets"
SAMPLE = REPO / "sample_corpus"


ENGINES = ("sqlite", "postgresql")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Never touch a user's .labeler/ or database: each test has its own LABELER_HOME, and no LABELER_DB_URL."""
    monkeypatch.setenv("LABELER_HOME", str(tmp_path / "labeler-home"))
    monkeypatch.delenv("LABELER_DB_URL", raising=False)


@pytest.fixture(autouse=True)
def _fresh_client_throttle(monkeypatch):
    """Each test starts with no failed sign-in counted against its (loopback) client: labeler_app.throttle's
    counts live in the process, and tests would otherwise add up to a wait."""
    from labeler_app.throttle import ClientThrottle

    monkeypatch.setattr("labeler_app.accounts.CLIENTS", ClientThrottle())


# A test about SQLite itself (its files, pragmas, the sqlite3 module) pins the engine.
sqlite_only = pytest.mark.parametrize("db_engine", ["sqlite"])


@pytest.fixture(params=ENGINES)
def db_engine(request) -> str:
    """Each engine in turn: a test that takes it (or db_url, or store) runs on SQLite and on PostgreSQL."""
    return request.param


def new_db_url(request, engine: str, path: Path, *, migrated: bool = True) -> str:
    """A new database of the engine: the SQLite file `path` (not created yet), or a PostgreSQL database of
    the test's own (with the labeler schema and no rows, or empty; pg_support)."""
    if engine == "sqlite":
        return f"sqlite:///{path}"
    server = request.getfixturevalue("postgres_server")
    if not migrated:
        url = server.create_database(migrated=False)
        request.addfinalizer(lambda: server.drop_database(url))
        return url
    url = server.database()
    request.addfinalizer(lambda: server.give_back(url))
    return url


@pytest.fixture
def db_url(request, db_engine, tmp_path) -> str:
    """A database URL of each engine (tmp_path/labeler.db on SQLite)."""
    return new_db_url(request, db_engine, tmp_path / "labeler.db")


@pytest.fixture
def empty_db_url(request, db_engine, tmp_path) -> str:
    """An empty database of each engine (no labeler tables yet)."""
    return new_db_url(request, db_engine, tmp_path / "labeler.db", migrated=False)


@pytest.fixture
def store(db_url):
    """An open store on each engine."""
    from labeler_storage import open_store

    with open_store(db_url) as s:
        yield s


def need_datasets() -> Path:
    """The shared test collections; missing is a failure in CI, a skip on a laptop."""
    if not DATASETS.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{DATASETS} is missing: CI must have ../shared beside the checkout")
        pytest.skip("../shared/datasets not present")
    return DATASETS


class FakeEncoder:
    """Bag-of-words encoder over a fixed vocabulary: one dimension per word, L2-normalized.

    With it, the cosine of two texts is (shared words) / sqrt(|a| * |b|) over distinct
    vocabulary words, so tests can work out expected scores by hand.
    """

    name = "fake-bow"
    identity = "fake-bow@1"

    def __init__(self, vocabulary: list[str]):
        self.vocabulary = {w: i for i, w in enumerate(vocabulary)}
        self.calls = 0
        self.encoded = 0

    @property
    def dimension(self) -> int:
        return len(self.vocabulary)

    def encode(self, texts, *, progress=None, batch_size=64):
        self.calls += 1
        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in set(re.findall(r"\w+", text.lower())):
                if word in self.vocabulary:
                    out[i, self.vocabulary[word]] = 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        if progress:
            progress(len(texts), len(texts), "embedding")
        return out

    def encode_queries(self, questions):
        return self.encode(list(questions))


@pytest.fixture
def fake_encoder_factory():
    return FakeEncoder


def search_results(retriever, questions: list[str]) -> list:
    """Dense and BM25 rankings of `questions`, top 10: (doc_id, score) pairs (the cache tests compare them)."""
    from labeler.config import SearchParams

    return [[(h.doc_id, h.score) for h in hits] for mode in ("dense", "bm25")
            for hits in retriever.search_many(questions, SearchParams(k=10, mode=mode))]


def _url(db) -> str:
    url = getattr(db, "url", db)  # a Store, a URL or a path
    return url if isinstance(url, str) and "://" in url else f"sqlite:///{url}"


def snapshot(db) -> dict[str, list[tuple]]:
    """Every row of every table of a database (a SQLite file's path, a URL or a Store), read as another
    process would, to check a database is unchanged."""
    url = _url(db)
    if url.startswith("sqlite:///"):  # the file itself, without SQLAlchemy or the store's pragmas
        con = sqlite3.connect(url[len("sqlite:///"):])
        try:
            tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
        finally:
            con.close()
    engine = sa.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            tables = sorted(sa.inspect(conn).get_table_names())
            return {t: sorted((tuple(r) for r in conn.execute(sa.text(f'SELECT * FROM "{t}"'))), key=repr)
                    for t in tables}
    finally:
        engine.dispose()


def rows(db, sql: str, params: dict | None = None) -> list[tuple]:
    """The rows of one SQL statement on a database (a path, a URL or a Store), run on a connection of its
    own as another process would ([] for a statement that returns none)."""
    engine = sa.create_engine(_url(db), poolclass=NullPool)
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(sql), params or {})
            return [tuple(r) for r in result] if result.returns_rows else []
    finally:
        engine.dispose()



def import_demo(store, who: str = "setup"):
    """The sample corpus's demo golden set in the store's default collection: what uploading
    sample_corpus/golden.jsonl there does (the app's demo offer opens it in a collection of its own)."""
    from labeler.corpus import load_corpus
    from labeler_app.transfer import import_golden_set, read_for_import

    corpus = load_corpus(SAMPLE)
    return import_golden_set(store, read_for_import(SAMPLE / "golden.jsonl", corpus=corpus), corpus=corpus,
                             corpus_path=str(SAMPLE.resolve()), by=who).summary
