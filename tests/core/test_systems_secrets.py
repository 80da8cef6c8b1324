"""A declared endpoint's `${NAME}` secrets never come back out: against a real local server that
echoes the request (its Authorization header, its URL, its body) in error answers, every error
message, raw answer, run summary and `labeler eval` report shows *** where a secret value was.
And a secret is never a literal: every place one can hide (user:password, path, query, body,
headers) is refused with one line naming it, and shown masked in a declaration stored before."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from http_support import send_json
from labeler.errors import ConfigError
from labeler.systems import HttpSystem, load_system
from labeler.systems.endpoint_spec import redact
from labeler.systems.secrets import mask_declaration
from labeler_edge.cli import cli

TOKEN = "tok-9f8e7d6c5b4a"
KEY = "key/with space+plus"  # URL-encoded differently in the query string and in JSON


class EchoHandler(BaseHTTPRequestHandler):
    """401 echoing what it was sent, unless the question mentions "hotel"; then 200 with a "hit" id
    that is the secret too, and a bad score, so the mapping error quotes it."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    bodies: list = []  # every body received, to see what a `${NAME}` in the body was sent as

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        EchoHandler.bodies.append(body)
        if "hotel" in body["query"]:
            status, answer = 200, {"results": [{"id": "travel-001", "score": 0.9}]}
        elif "padded" in body["query"]:  # the header straddles the 200 characters an error quotes
            status, answer = 403, {"pad": "x" * 150, "authorization": self.headers["Authorization"]}
        elif "score" in body["query"]:
            status, answer = 200, {"results": [{"id": "x", "score": self.headers["Authorization"]}]}
        else:
            status, answer = 401, {"error": "bad credentials", "authorization": self.headers["Authorization"],
                                   "path": self.path, "body": body}
        send_json(self, answer, status)


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


RESPONSE = '[response]\nhits = "results"\nid = "id"\n'
LITERALS = [  # (declaration TOML, the field the refusal names)
    ('url = "https://bob:hunter22@search.test/s?q={query}"', "url user:password"),
    ('url = "https://tok-abc123@search.test/s?q={query}"', "url user:password"),
    ('url = "https://search.test/v1/token/abc123def/s?q={query}"', "url path segment 3"),
    ('url = "https://search.test/sk-live-4f9a8b7c6d/s?q={query}"', "url path segment 1"),
    ('url = "https://search.test/s?q={query}&sig=9f8e7d6c"', "url parameter sig"),
    ('url = "https://search.test/s?q={query}&apiKey=9f8e7d6c"', "url parameter apiKey"),
    ('url = "https://search.test/s"\n[body]\nquery = "{query}"\napi_key = "9f8e7d6c"', "body field api_key"),
    ('url = "https://search.test/s"\n[body]\nquery = "{query}"\nauth = {client_secret = "9f8e"}',
     "body field auth.client_secret"),
    ('url = "https://search.test/s?q={query}"\n[headers]\nX-Api = "9f8e7d6c"', "header X-Api"),
    ('url = "https://search.test/s?q={query}"\n[headers]\nX-Search-Token = "9f8e7d6c"', "header X-Search-Token"),
    ('url = "https://search.test/s?q={query}"\n[headers]\nCookie = "session=9f8e7d6c"', "header Cookie"),
    ('url = "https://search.test/s?q={query}"\n[headers]\nAuthorization = "Basic Ym9iOmh1bnRlcjI="',
     "header Authorization"),
]


@pytest.mark.parametrize("toml, where", LITERALS)
def test_declaration_with_a_literal_secret_is_refused_naming_the_field(toml, where, tmp_path):
    path = tmp_path / "acme.toml"
    path.write_text(f"{toml}\n{RESPONSE}", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_system(path)
    message = str(info.value)
    assert f"a secret is written in plain text ({where})" in message and "Hint:" in message and "${" in message
    assert "\n" not in message and str(path) in message
    golden = tmp_path / "golden.jsonl"
    golden.write_text((SAMPLE / "golden.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(golden), "--system", str(path)])
    assert result.exit_code == 2 and where in result.stderr and "Traceback" not in result.output + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("toml", [
    'url = "https://${SEARCH_USER}:${SEARCH_PASSWORD}@search.test/s?q={query}&sig=${SEARCH_SIG}"',
    'url = "https://search.test/v1/token/${SEARCH_TOKEN}/s?q={query}"',
    'url = "https://search.test/s"\n[body]\nquery = "{query}"\napi_key = "${SEARCH_KEY}"\nkeywords = "on"\n'
    'max_tokens = "{k}"',
    'url = "https://search.test/indexes/3f2a9c1e-77b0-4c1e-9a55-0d2e8f6b1c3a/s?q={query}&key_field=title"\n'
    '[headers]\nAuthorization = "Bearer ${SEARCH_TOKEN}"\nX-Client = "labeler"',
])
def test_declaration_with_secrets_as_references_loads(toml, tmp_path):
    path = tmp_path / "acme.toml"
    path.write_text(f"{toml}\n{RESPONSE}", encoding="utf-8")
    assert load_system(path).spec.literal_secrets() == []


def test_a_body_secret_reference_is_sent_resolved_and_never_shown(echo):
    spec = {**leak_declaration(echo), "body": {"query": "{query}", "k": "{k}", "api_key": "${PROBE_KEY}"}}
    EchoHandler.bodies.clear()
    with HttpSystem(spec) as system:
        probe = system.test_query("vacation days", 5)
        run = system.search_many({"q1": "vacation days"}, 5)
    assert EchoHandler.bodies[0]["api_key"] == KEY  # sent as the environment has it
    assert probe.request["json"]["api_key"] == "***" and system.describe()["body"]["api_key"] == "${PROBE_KEY}"
    for text in (probe.error, json.dumps(probe.request), run.errors["q1"].message, json.dumps(dict(run.system))):
        assert_no_secret(text)


def test_a_declaration_stored_with_literal_secrets_is_shown_masked(tmp_path):
    from labeler_app import systems as sy
    from labeler_app.evaluate import system_line  # noqa: F401 - the caption of a saved run goes through it

    text = ('name = "old"\nurl = "https://bob:hunter22@search.test/v1/token/abc123def/s?q={query}&sig=9f8e7d6c"\n'
            '[headers]\nX-Api-Key = "literal-key-123"\n[body]\nquery = "{query}"\napi_key = "body-key-456"\n'
            + RESPONSE)
    import tomllib

    declaration = tomllib.loads(text)  # as saved before literal secrets were refused
    shown = sy.shown_text({"declaration": declaration, "text": text})
    line = sy.system_line({"system": {"kind": "http", "name": "old", "url": declaration["url"]}})
    masked = mask_declaration(declaration)
    for out in (shown, line, json.dumps(masked)):
        for secret in ("hunter22", "abc123def", "9f8e7d6c", "literal-key-123", "body-key-456"):
            assert secret not in out, out
    assert masked["url"] == "https://***@search.test/v1/token/***/s?q={query}&sig=***"
    assert masked["headers"] == {"X-Api-Key": "***"} and masked["body"] == {"query": "{query}", "api_key": "***"}
    assert "https://***@search.test/v1/token/***/s" in line
