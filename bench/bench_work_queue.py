""""Next question" latency with 8 annotators at once, on SQLite and on PostgreSQL: p50 and p95.

Eight processes share one database of 300 questions (overlap 2, 10 judgments already on every
third question). Each annotator loops: ask for the next question (timed), grade one document
of it (timed: the baseline, one judgment write, measured in the same run), until it has asked
ROUNDS times. PostgreSQL is a throwaway server started here (tests/pg_support.py; skipped when
its binaries are missing: `make postgres`).

    .venv/bin/python bench/bench_work_queue.py [--rounds 40]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _common import REPO, percentiles  # noqa: E402

N_ANNOTATORS, N_QUESTIONS = 8, 300
ANNOTATOR = textwrap.dedent("""
    import json, sys, time
    from labeler_storage import open_store

    url, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = open_store(url, synchronous="NORMAL")
    print("ready", flush=True)
    sys.stdin.readline()
    ask, grade = [], []
    for i in range(rounds):
        t0 = time.perf_counter()
        qid = store.queue.next(name)
        t1 = time.perf_counter()
        if qid is None:
            break
        store.judgments.set(qid, f"doc-{i % 7}", i % 4, annotator=name)
        grade.append(time.perf_counter() - t1)
        ask.append(t1 - t0)
    print(json.dumps({"ask": ask, "grade": grade}), flush=True)
""")


def setup(url: str) -> None:
    from labeler_storage import open_store

    with open_store(url, synchronous="NORMAL") as store:
        for i in range(N_QUESTIONS):
            store.questions.add(f"Question {i}?", query_id=f"q{i:04d}")
            if i % 3 == 0:
                for d in range(10):
                    store.judgments.set(f"q{i:04d}", f"seed-{d}", d % 4, annotator=f"seed-{i % 2}")
        store.accounts.set_setting("overlap", 2)


def run(url: str, rounds: int) -> tuple[list[float], list[float]]:
    env_path = str(REPO)
    procs = [subprocess.Popen([sys.executable, "-c", ANNOTATOR, url, f"annotator-{i}", str(rounds)], cwd=REPO,
                              text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
             for i in range(N_ANNOTATORS)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    ask, grade = [], []
    for p in procs:
        out = json.loads(p.communicate(timeout=600)[0])
        ask += out["ask"]
        grade += out["grade"]
    return ask, grade


def report(engine: str, ask: list[float], grade: list[float]) -> None:
    a50, a95 = percentiles(ask)
    g50, g95 = percentiles(grade)
    print(f"{engine:10s} next question: p50 {a50 * 1000:6.1f} ms  p95 {a95 * 1000:6.1f} ms  ({len(ask)} asks) | "
          f"baseline, one judgment write: p50 {g50 * 1000:6.1f} ms  p95 {g95 * 1000:6.1f} ms | "
          f"ratio p50 {a50 / g50:.2f}x")


def main() -> None:
    """Measure on SQLite, then on PostgreSQL when its binaries are there."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/queue.db"
        setup(url)
        report("sqlite", *run(url, args.rounds))
    from pg_support import PostgresServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        print("postgresql skipped: no PostgreSQL binaries (make postgres)")
        return
    server = PostgresServer(bindir)
    try:
        server.start()
        url = server.create_database()
        setup(url)
        report("postgresql", *run(url, args.rounds))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
