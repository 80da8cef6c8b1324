"""Systems against real HTTP servers on localhost: a misbehaving endpoint (429, 500, slow, bad JSON,
missing fields), rate and concurrency limits measured at the server, secrets, chunk ids; plus the
Python-callable and uploaded-run systems and loading declarations from files."""
from __future__ import annotations

import email.utils
import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from labeler.errors import ConfigError
from labeler.systems import (CallableSystem, EndpointSpec, Hit, HttpSystem, RunFileSystem, SearchFailed, load_system,
                             system_from_dict)
from labeler.systems.http import retry_after_seconds


class Endpoint:
    """A real search endpoint whose behaviour per question is chosen by the question's first word."""

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}
        self.arrivals: list[float] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, headers=()):
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                self.answer(query["q"][0], int(query["k"][0]))

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.answer(body["query"], body["k"])

            def answer(self, question, k):
                with endpoint.lock:
                    n = endpoint.attempts[question] = endpoint.attempts.get(question, 0) + 1
                    endpoint.arrivals.append(time.monotonic())
                    endpoint.headers.append(dict(self.headers))
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                try:
                    self.behave(question.split()[0], question, k, n)
                finally:
                    with endpoint.lock:
                        endpoint.in_flight -= 1

            def behave(self, word, question, k, n):
                slug = "_".join(question.split())  # a valid doc id holds no whitespace
                ok = {"results": [{"id": f"{slug}-doc{i}", "score": 1.0 - i / 10} for i in range(k)],
                      "echo": question}
                if word == "r429" and n == 1:
                    return self.reply(429, {"error": "slow down"}, [("Retry-After", "1")])
                if word == "r429date" and n == 1:
                    when = email.utils.formatdate(time.time() + 1, usegmt=True)
                    return self.reply(429, {"error": "slow down"}, [("Retry-After", when)])
                if word == "r500" and n == 1:
                    return self.reply(500, "oops")
                if word == "down":
                    return self.reply(503, "maintenance")
                if word == "denied":
                    return self.reply(401, {"error": "bad token"})
                if word == "slow":
                    time.sleep(0.6)
                if word == "work":
                    time.sleep(0.05)
                if word == "badjson":
                    return self.reply(200, "{not json")
                if word == "nofield":
                    ok["results"][1].pop("score")
                if word == "chunks":  # doc a: chunks 1 and 3 (the later one scores higher); doc b: chunk 0
                    ok["results"] = [{"id": "a#1", "score": 0.5}, {"id": "b#0", "score": 0.8},
                                     {"id": "a#3", "score": 0.9}]
                return self.reply(200, ok)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint():
    server = Endpoint()
    yield server
    server.close()


def declare(endpoint: Endpoint | None, **changes) -> dict:
    url = endpoint.url if endpoint is not None else "http://127.0.0.1:9"
    spec = {"name": "flaky", "method": "POST", "url": url + "/search",
            "body": {"query": "{query}", "k": "{k}"},
            "response": {"hits": "results", "id": "id", "score": "score"},
            "timeout": 0.3, "retries": 2, "backoff": 0.01, "concurrency": 4}
    spec.update(changes)
    return spec


def test_http_system_retries_429_and_500_then_succeeds(endpoint):
    with HttpSystem(declare(endpoint)) as system:
        t0 = time.monotonic()
        run = system.search_many({"q1": "r429 hotel", "q2": "r500 laptop", "q3": "r429date visa"}, 3)
        seconds = time.monotonic() - t0
    assert run.ok and run.failed == 0
    assert [h.doc_id for h in run.hits["q1"]] == ["r429_hotel-doc0", "r429_hotel-doc1", "r429_hotel-doc2"]
    assert endpoint.attempts == {"r429 hotel": 2, "r500 laptop": 2, "r429date visa": 2}
    assert run.calls == 6 and run.retries == 3
    assert seconds >= 0.9  # Retry-After: 1 was honoured, not the 0.01 s backoff


def test_http_system_caps_a_long_retry_after(endpoint):
    with HttpSystem(declare(endpoint, max_retry_wait=0.05)) as system:
        t0 = time.monotonic()
        hits = system.search("r429 capped", 1)
    assert hits and time.monotonic() - t0 < 0.9  # Retry-After: 1, capped at 0.05 s
    assert endpoint.attempts == {"r429 capped": 2}


def test_http_system_failures_are_per_question_errors_never_empty_rankings(endpoint):
    questions = {"ok": "fine question", "down": "down always", "slow": "slow one", "json": "badjson here",
                 "field": "nofield here", "auth": "denied here"}
    with HttpSystem(declare(endpoint)) as system:
        run = system.search_many(questions, 3)
    assert set(run.hits) == {"ok"} and run.failed == 5
    assert run.error_counts() == {"http_status": 2, "timeout": 1, "bad_json": 1, "mapping": 1}
    assert run.errors["down"].attempts == 3 and endpoint.attempts["down always"] == 3  # 1 + 2 retries
    assert endpoint.attempts["denied here"] == 1 and "HTTP 401" in run.errors["auth"].message  # 4xx: no retry
    assert endpoint.attempts["slow one"] == 1 and "within 0.3s" in run.errors["slow"].message  # read timeout: no retry
    assert "hit 1: response.score 'score' found no value" in run.errors["field"].message
    assert run.run() == {"ok": {"fine_question-doc0": 1.0, "fine_question-doc1": 0.9, "fine_question-doc2": 0.8}}
    assert run.summary().startswith("1 of 6 questions answered; 5 failed (1 bad_json, 2 http_status, 1 mapping, 1 timeout)")


def test_http_system_unreachable_endpoint_fails_with_connection_errors(endpoint):
    url = endpoint.url
    endpoint.close()  # nothing listens there now
    with HttpSystem(declare(endpoint, url=url + "/search", retries=1)) as system:
        run = system.search_many({"q1": "anything"}, 5)
    assert run.errors["q1"].kind == "connection" and run.errors["q1"].attempts == 2
    assert "check the url" in run.errors["q1"].message


def test_http_system_concurrency_limit_holds_at_the_server(endpoint):
    questions = {f"q{i}": f"work {i}" for i in range(16)}
    with HttpSystem(declare(endpoint, concurrency=3)) as system:
        run = system.search_many(questions, 2)
    assert run.ok and endpoint.max_in_flight == 3
    assert list(run.query_ids) == list(questions)  # order kept whatever order answers came in


def test_http_system_rate_limit_spaces_requests(endpoint):
    questions = {f"q{i}": f"fast {i}" for i in range(11)}
    with HttpSystem(declare(endpoint, rate_limit=20, concurrency=8)) as system:
        t0 = time.monotonic()  # the server runs in this process: one clock
        run = system.search_many(questions, 1)
    assert run.ok
    # At 20 per second the i-th request cannot start before t0 + i/20 (a busy machine only delays
    # arrivals further); unlimited, eight threads would send the first eight within a few ms.
    arrivals = sorted(endpoint.arrivals)
    assert all(t >= t0 + i / 20 - 0.005 for i, t in enumerate(arrivals)), [round(t - t0, 3) for t in arrivals]


def test_http_system_env_header_resolved_at_call_time_and_never_described(endpoint, monkeypatch):
    spec = declare(endpoint, headers={"Authorization": "Bearer ${SEARCH_TOKEN}", "X-Client": "labeler"})
    system = HttpSystem(spec)
    with pytest.raises(ConfigError, match=r"\$\{SEARCH_TOKEN\}.*SEARCH_TOKEN is not set.*Hint: export SEARCH_TOKEN"):
        system.search_many({"q1": "fine"}, 1)
    assert endpoint.attempts == {}  # nothing sent without the secret
    monkeypatch.setenv("SEARCH_TOKEN", "s3cret-value")
    run = system.search_many({"q1": "fine"}, 1)
    system.close()
    assert endpoint.headers[0]["Authorization"] == "Bearer s3cret-value"
    for described in (json.dumps(system.describe()), json.dumps(dict(run.system))):
        assert "s3cret" not in described
    assert system.describe()["headers"] == {"Authorization": "Bearer ${SEARCH_TOKEN}", "X-Client": "labeler"}
    assert system.spec.literal_secrets() == []


def test_http_system_id_regex_maps_chunks_to_documents_with_best_chunk_score(endpoint):
    spec = declare(endpoint, id_regex=r"^(?P<doc>.+)#\d+$")
    with HttpSystem(spec) as system:
        hits = system.search("chunks please", 10)
    # a#1 (0.5), b#0 (0.8), a#3 (0.9): a keeps its first position and its best chunk's 0.9.
    assert hits == [Hit("a", 0.9), Hit("b", 0.8)]


def test_http_system_get_url_encodes_and_post_body_json_escapes_the_question(endpoint):
    question = 'echo "quotes" & spaces/slashes ?=# ünïcode \\ {k}'
    get = {"name": "get", "url": endpoint.url + "/search?q={query}&k={k}",
           "response": {"hits": "results", "id": "id", "score": "score"}}
    with HttpSystem(get) as system:
        probe = system.test_query(question, 2)
    assert probe.error is None and probe.raw_json["echo"] == question and probe.status == 200
    with HttpSystem(declare(endpoint)) as system:
        probe = system.test_query(question, 2)
    slug = "_".join(question.split())
    assert probe.raw_json["echo"] == question and probe.request["json"] == {"query": question, "k": 2}
    assert [h.doc_id for h in probe.hits] == [f"{slug}-doc0", f"{slug}-doc1"]


def test_http_test_query_shows_raw_text_and_the_mapping_error(endpoint):
    with HttpSystem(declare(endpoint)) as system:
        bad = system.test_query("badjson please")
        missing = system.test_query("nofield please", 3)
    assert bad.raw_text == "{not json" and bad.raw_json is None and "not JSON" in bad.error
    assert missing.raw_json["results"][0]["score"] == 1.0 and "hit 1" in missing.error and missing.hits == ()


@pytest.mark.parametrize("change, message", [
    ({"method": "PUT"}, "method must be GET or POST, got 'PUT'"),
    ({"url": "localhost:8000/search"}, "url must start with http:// or https://"),
    ({"method": "GET"}, "a GET request has no body"),
    ({"body": {"text": "{question}"}}, "body has an unknown placeholder {question}"),
    ({"body": {"k": "{k}"}}, "neither url nor body contains {query}"),
    ({"response": {"hits": "results", "score": "score"}}, "response.id is missing"),
    ({"response": {"hits": "results[", "id": "id"}}, "response.hits 'results[' is not a JMESPath expression"),
    ({"id_regex": "(a)(b)"}, "id_regex has several groups and none is named doc"),
    ({"concurrency": 0}, "concurrency must be a positive whole number, got 0"),
    ({"retries": -1}, "retries must be a whole number >= 0, got -1"),
    ({"backoff": -0.5}, "backoff must be a number >= 0, got -0.5"),
    ({"timeout": float("inf")}, "timeout must be a positive number, got inf"),
    ({"rate_limit": "fast"}, "rate_limit must be a positive number, got 'fast'"),
    ({"timout": 3}, "unknown key(s) timout"),
    ({"headers": {"Authorization": "Bearer ${bad-name}"}}, "references ${bad-name}, not an environment variable name"),
])
def test_endpoint_spec_rejects_bad_fields_in_one_line_with_a_hint(change, message):
    with pytest.raises(ConfigError) as info:
        EndpointSpec.from_dict(declare(None, **change))
    text = str(info.value)
    assert message in text and "Hint:" in text and "\n" not in text


def test_endpoint_declared_in_toml_and_json_files_loads_the_same(endpoint, tmp_path):
    toml = tmp_path / "acme.toml"
    toml.write_text(f'''name = "acme"
url = "{endpoint.url}/search"
timeout = 2
[headers]
Authorization = "Bearer ${{TOKEN}}"
[body]
query = "{{query}}"
k = "{{k}}"
[response]
hits = "results"
id = "id"
score = "score"
''', encoding="utf-8")
    from_toml = load_system(toml)
    assert from_toml.kind == "http" and from_toml.spec.method == "POST"  # a body implies POST
    as_json = tmp_path / "acme.json"
    as_json.write_text(json.dumps(from_toml.spec.to_dict()), encoding="utf-8")
    assert load_system(as_json).describe() == from_toml.describe()
    assert system_from_dict(from_toml.spec.to_dict()).spec == from_toml.spec  # the dict form round-trips
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "x"\nurl = \n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken.toml:2: not valid TOML.*line 2"):
        load_system(broken)


def test_system_from_dict_builds_every_kind_and_refuses_unknown_ones(tmp_path, callables):
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 0.5 t\n", encoding="utf-8")
    assert system_from_dict({"kind": "run", "path": "run.trec"}, base_dir=tmp_path).search("q1", 5) == [Hit("d1", 0.5)]
    python = system_from_dict({"kind": "python", "target": "labeler_test_callables:search", "path": "."},
                              base_dir=callables)
    assert python.search("a b", 1) == [Hit("doc-a", 1.0)]
    builtin = system_from_dict({"kind": "builtin", "corpus": "corpus", "config": {"k": 20, "retriever": "bm25"}},
                               base_dir=tmp_path)
    assert builtin.describe()["config"]["mode"] == "bm25" and builtin.describe()["corpus"] == str(tmp_path / "corpus")
    with pytest.raises(ConfigError, match="system kind must be one of builtin, http, python, run, got 'ftp'"):
        system_from_dict({"kind": "ftp"})
    with pytest.raises(ConfigError, match="python system: unknown key"):
        system_from_dict({"kind": "python", "target": "x:y", "module": "x"})
    with pytest.raises(ConfigError, match="system file .*missing.toml' not found"):
        load_system(str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match="'acme' is neither a file nor package.module:function"):
        load_system("acme")


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0  # past: no wait
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


CALLABLES = '''
def search(question, k):
    return [("doc-" + w, 1.0 / (i + 1)) for i, w in enumerate(question.split())][:k]

def chunky(question, k):
    return [{"doc_id": "a", "score": 0.2}, ("b", 0.5), ("a", 0.9)]

def raises(question, k):
    raise RuntimeError("index offline")

def wrong_shape(question, k):
    return [("doc-1", 0.5, "extra")]

def not_iterable(question, k):
    return 42

def one_argument(question):
    return []

def exits(question, k):
    import sys
    sys.exit(3)

def exits_while_yielding(question, k):
    yield ("doc-1", 1.0)
    raise SystemExit("giving up")

def interrupted(question, k):
    raise KeyboardInterrupt

value = 3
'''


@pytest.fixture
def callables(tmp_path):
    (tmp_path / "labeler_test_callables.py").write_text(CALLABLES, encoding="utf-8")
    return tmp_path


def test_python_callable_system_ranks_and_reports_bad_calls_per_question(callables):
    system = CallableSystem("labeler_test_callables:search", path=callables)
    assert system.search("vacation days policy", 2) == [Hit("doc-vacation", 1.0), Hit("doc-days", 0.5)]
    assert CallableSystem("labeler_test_callables:chunky", path=callables).search("x", 5) == [Hit("a", 0.9), Hit("b", 0.5)]
    for target, kind, text in (("raises", "exception", "raised RuntimeError: index offline"),
                               ("wrong_shape", "bad_return", "item 0 is ('doc-1', 0.5, 'extra'), not a (doc_id, score) pair"),
                               ("not_iterable", "bad_return", "returned int, not an iterable")):
        run = CallableSystem(f"labeler_test_callables:{target}", path=callables).search_many({"q1": "x"}, 3)
        assert run.failed == 1 and run.errors["q1"].kind == kind and text in run.errors["q1"].message
    assert system.describe() == {"kind": "python", "name": "labeler_test_callables:search",
                                 "target": "labeler_test_callables:search", "path": str(callables)}


def test_python_callable_calling_sys_exit_fails_that_question_only(callables, monkeypatch):
    for target, text in (("exits", "labeler_test_callables:exits called sys.exit(3)"),
                         ("exits_while_yielding", "called sys.exit('giving up') while yielding results")):
        system = CallableSystem(f"labeler_test_callables:{target}", path=callables)
        run = system.search_many({"q1": "x", "q2": "y"}, 3)
        assert run.failed == 2 and run.errors["q2"].kind == "exception" and text in run.errors["q2"].message
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C still stops the run
        CallableSystem("labeler_test_callables:interrupted", path=callables).search_many({"q1": "x"}, 3)
    from click.testing import CliRunner

    from conftest import SAMPLE
    from labeler_edge.cli import cli

    monkeypatch.chdir(callables)  # `--system module:function` imports from the current folder
    result = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(SAMPLE / "golden.jsonl"),
                                      "--system", "labeler_test_callables:exits"])
    assert result.exit_code == 2 and "Error: labeler_test_callables:exits: no question answered, all 62 failed" \
        in result.stderr and "called sys.exit(3)" in result.stderr


def test_python_callable_module_calling_sys_exit_on_import_is_a_config_error(tmp_path):
    (tmp_path / "labeler_test_exits_on_import.py").write_text("import sys\nsys.exit(4)\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"importing 'labeler_test_exits_on_import' called sys.exit\(4\).*Hint:"):
        CallableSystem("labeler_test_exits_on_import:search", path=tmp_path)


@pytest.mark.parametrize("target, message", [
    ("labeler_no_such_module:search", "cannot import 'labeler_no_such_module'"),
    ("labeler_test_callables:missing", "has no attribute 'missing'"),
    ("labeler_test_callables:value", "is a int, not a function"),
    ("labeler_test_callables:one_argument", "cannot be called as one_argument(question, k)"),
    ("not a target", "is not of the form package.module:function"),
])
def test_python_callable_bad_target_is_a_config_error(callables, target, message):
    with pytest.raises(ConfigError, match="Hint:") as info:
        CallableSystem(target, path=callables)
    assert message in str(info.value)


def test_uploaded_run_system_ranks_in_trec_order_and_flags_missing_queries(tmp_path):
    path = tmp_path / "mine.trec"
    path.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d3 2 0.9 t\nq1 Q0 d2 3 0.5 t\nq2 Q0 d9 1 1.0 t\n", encoding="utf-8")
    system = RunFileSystem(path, questions={"q1": "How many vacation days?"})
    run = system.search_many({"q1": "How many vacation days?", "q3": "Not ranked"}, 2)
    # score descending, ties by doc id descending (trec_eval): d3 0.9, then d2 before d1 at 0.5; cut at k=2.
    assert run.hits["q1"] == (Hit("d3", 0.9), Hit("d2", 0.5))
    assert run.errors["q3"].kind == "not_in_run" and run.failed == 1
    assert system.search("How many vacation days?", 1) == [Hit("d3", 0.9)]
    with pytest.raises(SearchFailed, match="not in the run file"):
        system.search("an unknown question", 3)
    assert system.describe()["kind"] == "run" and system.describe()["queries"] == 2
    assert load_system(path).describe()["sha256"] == system.describe()["sha256"]
