"""A declared endpoint's `${NAME}` secrets never come back out: against a real local server that
echoes the request (its Authorization header, its URL) in error answers, every error message,
raw answer, run summary and `labeler eval` report shows *** where a secret value was."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from labeler.cli import cli
from labeler.systems import HttpSystem, load_system
from labeler.systems.endpoint_spec import redact

TOKEN = "tok-9f8e7d6c5b4a"
KEY = "key/with space+plus"  # URL-encoded differently in the query string and in JSON


class EchoHandler(BaseHTTPRequestHandler):
    """401 echoing what it was sent, unless the question mentions "hotel"; then 200 with a "hit" id
    that is the secret too, and a bad score, so the mapping error quotes it."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "hotel" in body["query"]:
            status, answer = 200, {"results": [{"id": "travel-001", "score": 0.9}]}
        elif "padded" in body["query"]:  # the header straddles the 200 characters an error quotes
            status, answer = 403, {"pad": "x" * 150, "authorization": self.headers["Authorization"]}
        elif "score" in body["query"]:
            status, answer = 200, {"results": [{"id": "x", "score": self.headers["Authorization"]}]}
        else:
            status, answer = 401, {"error": "bad credentials", "authorization": self.headers["Authorization"],
                                   "path": self.path}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def echo(monkeypatch):
    """The echoing server's URL, with PROBE_TOKEN and PROBE_KEY set."""
    monkeypatch.setenv("PROBE_TOKEN", TOKEN)
    monkeypatch.setenv("PROBE_KEY", KEY)
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def leak_declaration(url: str) -> dict:
    return {"name": "leak", "url": url + "/search?key=${PROBE_KEY}", "headers": {"Authorization": "Bearer ${PROBE_TOKEN}"},
            "body": {"query": "{query}", "k": "{k}"}, "response": {"hits": "results", "id": "id", "score": "score"},
            "retries": 0}


def assert_no_secret(text: str) -> None:
    for secret in (TOKEN, KEY, "key%2Fwith", "key/with", "with+space", "with%20space"):
        assert secret not in text, text


def test_http_system_redacts_secret_values_from_errors_and_raw_answers(echo):
    with HttpSystem(leak_declaration(echo)) as system:
        run = system.search_many({"q1": "vacation days", "q2": "hotel limit", "q3": "score please"}, 5)
        probe = system.test_query("vacation days", 5)
        mapped = system.test_query("score please", 5)
    assert set(run.hits) == {"q2"} and run.errors["q1"].kind == "http_status" and run.errors["q3"].kind == "mapping"
    assert "Bearer ***" in run.errors["q1"].message and "Bearer ***" in run.errors["q3"].message
    assert "key=***" in probe.error and "Bearer ***" in probe.error  # an HTTP error: no raw answer kept
    assert mapped.raw_json["results"][0]["score"] == "Bearer ***" and "Bearer ***" in mapped.raw_text
    for text in (run.summary(), *(e.message for e in run.errors.values()), probe.error, mapped.error,
                 mapped.raw_text, json.dumps(mapped.raw_json), json.dumps(dict(run.system))):
        assert_no_secret(text)


def test_redact_masks_every_form_of_a_secret_and_one_cut_short():
    secret = 'p/ss "w rd'
    text = ('sent p/ss "w rd, json p/ss \\"w rd, url p%2Fss%20%22w%20rd, plus p%2Fss+%22w+rd, '
            "cut 'p/ss \"w...")
    assert redact(text, [secret]) == "sent ***, json ***, url ***, plus ***, cut '***..."
    assert redact("HTTP 401: id 1", ["1"]) == "HTTP 401: id 1"  # too short to mask without garbling


def test_http_system_masks_a_secret_before_cutting_the_quoted_answer(echo):
    with HttpSystem(leak_declaration(echo)) as system:
        run = system.search_many({"q1": "padded please"}, 5)
    message = run.errors["q1"].message
    assert "HTTP 403" in message and "Bearer ***" in message  # masked, then cut after the mask
    assert "tok-" not in message and "Bearer tok" not in message


def test_cli_eval_never_prints_a_secret_the_endpoint_echoes(echo, tmp_path):
    leak = tmp_path / "leak.toml"
    spec = leak_declaration(echo)
    leak.write_text(f'name = "leak"\nurl = "{spec["url"]}"\nretries = 0\n'
                    '[headers]\nAuthorization = "Bearer ${PROBE_TOKEN}"\n'
                    '[body]\nquery = "{query}"\nk = "{k}"\n'
                    '[response]\nhits = "results"\nid = "id"\nscore = "score"\n', encoding="utf-8")
    assert load_system(leak).describe()["headers"] == {"Authorization": "Bearer ${PROBE_TOKEN}"}
    lines = (SAMPLE / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    every_fails, one_fails = tmp_path / "fails.jsonl", tmp_path / "mixed.jsonl"
    every_fails.write_text(lines[0] + "\n", encoding="utf-8")  # q-0001: vacation days -> 401
    one_fails.write_text(lines[0] + "\n" + lines[1] + "\n", encoding="utf-8")  # q-0002: the hotel limit -> 200
    failed = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(every_fails), "--system", str(leak)])
    assert failed.exit_code == 2 and "HTTP 401" in failed.stderr and "Bearer ***" in failed.stderr
    assert_no_secret(failed.output + failed.stderr)
    mixed = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(one_fails), "--system", str(leak), "--json"])
    assert mixed.exit_code == 0, mixed.stderr
    report = json.loads(mixed.stdout)
    assert "Bearer ***" in report["settings"]["failed"]["q-0001"] and "Bearer ***" in mixed.stderr
    assert_no_secret(mixed.stdout + mixed.stderr)
