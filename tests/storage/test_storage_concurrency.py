"""Durability under real processes: concurrent writers, and a SIGKILL in the middle of an import; on SQLite
(one file, BEGIN IMMEDIATE) and on PostgreSQL (READ COMMITTED with row locks)."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import rows, snapshot

from labeler_storage import open_store

REPO = Path(__file__).resolve().parents[2]
N_WRITERS, N_EACH = 8, 250

WRITER = textwrap.dedent("""
    import sys
    from labeler_storage import open_store

    url, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # NORMAL: the subject here is locking; FULL adds ~5 ms of fsync per commit and nothing else
    # (the same test with FULL passes too, in ~11 s on a 2-core machine).
    store = open_store(url, synchronous="NORMAL")
    print("ready", flush=True)
    sys.stdin.readline()  # wait for "go": every writer starts at once
    for i in range(n):
        # one transaction per judgment, as the app writes a label click
        store.judgments.set(f"q{i % 10}", f"doc-{worker}-{i}", i % 4, annotator=f"annotator-{worker}")
    print("done", flush=True)
""")

IMPORTER = textwrap.dedent("""
    import sys, time
    from labeler.golden import read_golden
    from labeler_storage import open_store

    url, path = sys.argv[1], sys.argv[2]
    golden = read_golden(path)
    store = open_store(url)

    def progress(done, total):
        if done >= total // 2:
            print("started", done, flush=True)  # inside the import transaction, half written
            time.sleep(120)

    store.golden.import_set(golden, progress=progress)
    print("finished", flush=True)
""")


def _child(script: str, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=REPO, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)




def test_store_concurrent_writers_lose_nothing(db_url):
    with open_store(db_url) as store:
        for i in range(10):
            store.questions.add(f"Question {i}?", query_id=f"q{i}")
    url = db_url
    writers = [_child(WRITER, url, str(w), str(N_EACH), stdin=subprocess.PIPE) for w in range(N_WRITERS)]
    try:
        for p in writers:
            assert p.stdout.readline().strip() == "ready", p.stderr.read()
        started = time.monotonic()
        for p in writers:
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [p.communicate(timeout=120) for p in writers]
        elapsed = time.monotonic() - started
    finally:
        for p in writers:
            if p.poll() is None:
                p.kill()
    for p, (out, err) in zip(writers, results):
        assert p.returncode == 0 and out.strip() == "done" and err == "", err
    with open_store(db_url) as store:
        judgments = store.judgments.list()
        assert store.collections.revision() == 1 + 10 + 2000  # created, 10 questions, every judgment: no bump lost
    assert len(judgments) == N_WRITERS * N_EACH == 2000
    assert {(j.annotator, j.doc_id, j.grade) for j in judgments} == {
        (f"annotator-{w}", f"doc-{w}-{i}", i % 4) for w in range(N_WRITERS) for i in range(N_EACH)}
    print(f"{N_WRITERS * N_EACH} concurrent single-judgment transactions in {elapsed:.1f} s")


def _written(url: str) -> int:
    """Bytes the database holds, uncommitted writes included: SQLite's WAL file, PostgreSQL's questions table."""
    if url.startswith("sqlite:///"):
        wal = Path(url[len("sqlite:///"):] + "-wal")
        return wal.stat().st_size if wal.exists() else 0
    return rows(url, "SELECT pg_total_relation_size('questions')")[0][0]


def test_store_sigkill_mid_import_leaves_database_as_it_was(db_url, tmp_path):
    with open_store(db_url) as store:
        store.questions.add("Already here?", query_id="keep")
        store.judgments.set("keep", "d1", 2, annotator="asha")
        store.runs.save({"model": "m"}, summary={"ndcg@10": 0.5}, per_query={}, golden_hash="g")
    golden = tmp_path / "big.jsonl"
    with open(golden, "w", encoding="utf-8") as f:
        for i in range(10_000):
            f.write(json.dumps({"query_id": f"q-{i:05d}", "question": f"Question number {i} " + "x" * 200,
                                "relevance": {f"doc-{i}-{k}": k % 4 for k in range(3)},
                                "annotators": ["asha"]}) + "\n")
    before = snapshot(db_url)
    written_before = _written(db_url)

    child = _child(IMPORTER, db_url, str(golden))
    try:
        line = child.stdout.readline()
        assert line.startswith("started"), child.stderr.read()
        written_during = _written(db_url)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
    # The import had written thousands of rows (into SQLite's WAL, PostgreSQL's table) before it died...
    assert written_during > written_before
    # ...and none of them is visible: the database is exactly as before, and healthy.
    assert snapshot(db_url) == before
    if db_url.startswith("sqlite:///"):
        con = sqlite3.connect(db_url[len("sqlite:///"):])
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        con.close()
    with open_store(db_url) as store:  # the lock died with the process: the next writer goes on
        store.judgments.set("keep", "d2", 1, annotator="ben")
        assert len(store.judgments.list()) == 2


@pytest.mark.parametrize("n_threads", [8])
def test_store_threads_share_one_store(db_url, n_threads):
    # Streamlit runs each session in a thread over one cached Store.
    from concurrent.futures import ThreadPoolExecutor

    with open_store(db_url) as store:
        store.questions.add("Q?", query_id="q")

        def label(worker: int) -> None:
            for i in range(25):
                store.judgments.set("q", f"d{i}", worker % 4, annotator=f"a{worker}")

        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(label, range(n_threads)))
        assert len(store.judgments.list()) == n_threads * 25
