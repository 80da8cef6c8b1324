"""Throughput of scoring `labeler serve` as a declared HTTP endpoint: 8 requests in flight against
the same requests sent one by one in a plain loop.

`labeler serve sample_corpus` runs as a real subprocess (cache under BENCH_HOME). 1,000 distinct
questions (the sample golden set's 62, each numbered) are sent: first one by one with a plain
httpx loop (the baseline), then through `HttpSystem.search_many` with concurrency 8. The server
counts the searches it runs: each phase must add exactly its questions (plus the retries the
system reports), so no question is sent twice except by a retry, and the two phases must return
the same rankings. A second server started with `--max-batch 1` shows what the server's
micro-batching adds. Target: concurrent / one-by-one >= 3x (2 cores).

That server is CPU-bound: on 2 cores its ratio cannot pass the model's batch-of-8 ceiling (also
printed). A remote search API is latency-bound instead: the third phase runs a server (its own
process) that answers each question after LATENCY seconds, as a network hop and a remote index
do, and sends the same questions both ways. Target there: concurrency 8 >= 5x one by one.
Run: .venv/bin/python bench/bench_endpoint.py [n_questions [extra `labeler serve` options, e.g. --threads 1]]
     .venv/bin/python bench/bench_endpoint.py latency [n_questions]   # the latency-bound phase alone
"""
from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time

from _common import BENCH_HOME, REPO

sys.path.insert(0, str(REPO / "tests"))

SAMPLE = REPO / "sample_corpus"
CONCURRENCY = 8
LATENCY = 0.030  # seconds the latency-bound server takes per question
LATENCY_QUESTIONS = 300


def _latency_server(port_out) -> None:
    """A search API that answers after LATENCY seconds (run in its own process)."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from http_support import send_json

    count = {"searches": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def reply(self, data: dict) -> None:
            send_json(self, data)

        def do_GET(self):
            self.reply(count)

        def do_POST(self):
            asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(LATENCY)
            with lock:
                count["searches"] += 1
            slug = str(abs(hash(asked["query"])) % 1000)
            self.reply({"hits": [{"doc_id": f"d{slug}-{i}", "score": 1.0 - i / 100} for i in range(asked["k"])]})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_out.put(server.server_port)
    server.serve_forever()


def latency_bound(questions: dict[str, str], k: int) -> tuple[float, float]:
    """The one-by-one and concurrent phases against the latency-bound server."""
    import multiprocessing

    import httpx

    ports = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_latency_server, args=(ports,), daemon=True)
    proc.start()
    try:
        url = f"http://127.0.0.1:{ports.get(timeout=30)}"
        with httpx.Client(timeout=30) as client:
            return phase(client, url, questions, k, f"latency-bound server ({LATENCY * 1000:.0f} ms a question)")
    finally:
        proc.terminate()
        proc.join(timeout=10)


def start_server(*extra: str) -> tuple[subprocess.Popen, str]:
    """`labeler serve sample_corpus --port 0 [extra]`; (process, base URL) once it listens."""
    script = os.path.join(os.path.dirname(sys.executable), "labeler")
    env = {**os.environ, "LABELER_HOME": str(BENCH_HOME)}
    proc = subprocess.Popen([script, "serve", str(SAMPLE), "--port", "0", *extra], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    line = lines.get(timeout=300)
    return proc, line.split(" at ", 1)[1].split()[0]


def searches(client, url: str) -> int:
    return client.get(url + "/health").json()["searches"]


def one_by_one(client, url: str, questions: dict[str, str], k: int) -> tuple[float, dict[str, list[str]]]:
    t0 = time.perf_counter()
    ranked = {}
    for query_id, question in questions.items():
        response = client.post(url + "/search", json={"query": question, "k": k})
        response.raise_for_status()
        ranked[query_id] = [h["doc_id"] for h in response.json()["hits"]]
    return time.perf_counter() - t0, ranked


def concurrent(url: str, questions: dict[str, str], k: int):
    from labeler.systems import HttpSystem

    spec = {"name": "labeler-serve", "url": url + "/search", "body": {"query": "{query}", "k": "{k}"},
            "response": {"hits": "hits", "id": "doc_id", "score": "score"}, "concurrency": CONCURRENCY,
            # a throughput bench, not a deadline test: an unbatched server on a loaded machine may take
            # seconds per question, and 8 in flight then wait past the 10 s default deadline
            "deadline": 600}
    with HttpSystem(spec) as system:
        t0 = time.perf_counter()
        run = system.search_many(questions, k)
        return time.perf_counter() - t0, run


def phase(client, url: str, questions: dict[str, str], k: int, label: str):
    """Both ways against one server, each checked by the server's search count."""
    before = searches(client, url)
    base_s, base_ranked = one_by_one(client, url, questions, k)
    middle = searches(client, url)
    conc_s, run = concurrent(url, questions, k)
    after = searches(client, url)
    assert middle - before == len(questions), f"{label}: the loop made {middle - before} searches"
    assert run.ok, run.summary()
    assert after - middle == len(questions) + run.retries, f"{label}: {after - middle} searches, {run.retries} retries"
    same = sum(base_ranked[q] == [h.doc_id for h in run.hits[q]] for q in questions)
    n = len(questions)
    print(f"{label}:")
    print(f"  one by one (plain loop):     {base_s:6.2f} s  {n / base_s:7.1f} q/s")
    print(f"  concurrency {CONCURRENCY} (HttpSystem):  {conc_s:6.2f} s  {n / conc_s:7.1f} q/s   "
          f"ratio {base_s / conc_s:.2f}x")
    print(f"  server searches: +{middle - before} then +{after - middle} (retries {run.retries}); "
          f"same rankings {same}/{n}")
    return base_s, conc_s


def model_ceiling(questions: list[str], batch: int = CONCURRENCY) -> float:
    """In this process, with no HTTP: the model's throughput encoding `questions` in batches of
    `batch` over one by one. The endpoint's ratio cannot beat it: its batches hold at most
    CONCURRENCY questions, and HTTP adds the same work per question both ways."""
    from labeler.config import RunConfig
    from labeler.retrieval.embedding import Embedder

    embedder = Embedder(RunConfig().model)
    embedder.encode_queries(questions[:batch])  # load and warm
    t0 = time.perf_counter()
    for question in questions:
        embedder.encode_queries([question])
    single = time.perf_counter() - t0
    t0 = time.perf_counter()
    for start in range(0, len(questions), batch):
        embedder.encode_queries(questions[start:start + batch])
    batched = time.perf_counter() - t0
    n = len(questions)
    print(f"model alone (no HTTP): one by one {single / n * 1000:.2f} ms a question, in batches of {batch} "
          f"{batched / n * 1000:.2f} ms: {single / batched:.2f}x, the ceiling of the ratio below")
    return single / batched


def main(n_questions: int = 1000, serve_options: tuple[str, ...] = (), k: int = 10) -> None:
    import httpx

    from labeler.golden import read_golden

    golden = [q.question for q in read_golden(SAMPLE / "golden.jsonl").queries]
    questions = {f"b-{i:04d}": f"{golden[i % len(golden)]} ({i})" for i in range(n_questions)}
    assert len(set(questions.values())) == n_questions
    print(f"{n_questions} distinct questions, k={k}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}, server options: {' '.join(serve_options) or '(defaults)'}")
    model_ceiling(list(questions.values())[:400])
    results = {}
    for label, extra in (("micro-batching server (default)", ()), ("server with --max-batch 1", ("--max-batch", "1"))):
        proc, url = start_server(*serve_options, *extra)
        try:
            with httpx.Client(timeout=30) as client:
                for q in list(questions.values())[:20]:  # warm the server and the connection
                    client.post(url + "/search", json={"query": q, "k": k})
                results[label] = phase(client, url, questions, k, label)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    (base, conc), (_, unbatched) = results.values()
    latency_base, latency_conc = latency_bound(dict(list(questions.items())[:LATENCY_QUESTIONS]), k)
    print(f"concurrent / one-by-one throughput: {base / conc:.2f}x   target >= 3x  (CPU-bound local server)")
    print(f"latency-bound endpoint, concurrent / one-by-one: {latency_base / latency_conc:.2f}x   target >= 5x")
    print(f"micro-batching at concurrency {CONCURRENCY}: {unbatched / conc:.2f}x the throughput of --max-batch 1")


def latency_only(n_questions: int = LATENCY_QUESTIONS, k: int = 10) -> None:
    """The latency-bound phase alone (no model, no `labeler serve`)."""
    questions = {f"b-{i:04d}": f"question number {i}" for i in range(n_questions)}
    print(f"{n_questions} distinct questions, k={k}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    base, conc = latency_bound(questions, k)
    print(f"latency-bound endpoint, concurrent / one-by-one: {base / conc:.2f}x   target >= 5x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["latency"]:
        latency_only(int(sys.argv[2]) if len(sys.argv) > 2 else LATENCY_QUESTIONS)
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, tuple(sys.argv[2:]))
