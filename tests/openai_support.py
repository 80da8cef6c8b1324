"""A real HTTP server on localhost speaking OpenAI's chat-completions protocol, answering from a rule.

Not a language model: the grade is word overlap. The server finds the question after "Query:"
and the document after "Passage:" in the prompt (UMBRELA's layout, either order), and answers
`##final score: N` with N from the share of the question's words (3+ letters) found in the
document: < 0.2 -> 0, < 0.4 -> 1, < 0.7 -> 2, else 3 (`overlap_grade`, which tests use as the
expected grade). Switches make it misbehave, to test the client:

    server.script = ["429", "500", "slow", "malformed", "no_grade", "out_of_scale", "huge",
                     "no_choices", "trickle", "echo_auth", "two_scores"]   # one per request, in order
    server.mode = "slow"           # every request (after the script is used up)
    server.token = "sk-test-123"   # requests without "Authorization: Bearer <token>" get 401
    server.delay = 0.05            # seconds each answer waits (to see concurrency)
    server.shift = 1               # every grade raised by 1 (capped at 3): a judge that changed its mind
    server.document_first_penalty = 1   # grade lowered by 1 when the passage comes before the query

It records every request (`requests`: headers and JSON body), the start times (`starts`) and
the most requests in flight at once (`peak`).
"""
from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

from http_support import send

_WORD = re.compile(r"[a-z0-9]{3,}")
_QUERY = re.compile(r"^Query: (.*)$", re.MULTILINE)
_PASSAGE = re.compile(r"^Passage: (.*?)(?=\n\n|\nQuery:|\Z)", re.MULTILINE | re.DOTALL)


def overlap_grade(question: str, document: str) -> int:
    """The rule: share of the question's words found in the document, cut at 0.2 / 0.4 / 0.7."""
    q = set(_WORD.findall(question.lower()))
    d = set(_WORD.findall(document.lower()))
    share = len(q & d) / len(q) if q else 0.0
    return 0 if share < 0.2 else 1 if share < 0.4 else 2 if share < 0.7 else 3


def _completion(content: str, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-rule", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


class RuleServer(ThreadingHTTPServer):
    """The server and its switches (see the module docstring)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script: list[str] = []
        self.mode: str | None = None
        self.token: str | None = None
        self.delay = 0.0
        self.shift = 0
        self.document_first_penalty = 0
        self.requests: list[dict[str, Any]] = []
        self.starts: list[float] = []
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        """The base URL a judge declares (".../v1")."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def next_behaviour(self) -> str | None:
        with self.lock:
            return self.script.pop(0) if self.script else self.mode


class _Handler(BaseHTTPRequestHandler):
    server: RuleServer

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's API
        server = self.server
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with server.lock:
            server.starts.append(time.monotonic())
            server.in_flight += 1
            server.peak = max(server.peak, server.in_flight)
        try:
            self._answer(server, raw)
        finally:
            with server.lock:
                server.in_flight -= 1

    def _answer(self, server: RuleServer, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            body = None
        with server.lock:
            server.requests.append({"path": self.path, "headers": dict(self.headers), "json": body})
        behaviour = server.next_behaviour()
        if server.delay:
            time.sleep(server.delay)
        if self.path.rstrip("/") != "/v1/chat/completions":
            return send(self, 404, b'{"error": "not found"}')
        if server.token is not None and self.headers.get("Authorization") != f"Bearer {server.token}":
            return send(self, 401, json.dumps({"error": "bad key",
                                               "got": self.headers.get("Authorization")}).encode())
        if behaviour == "echo_auth":
            return send(self, 400, json.dumps({"error": f"rejected {self.headers.get('Authorization')}"}).encode())
        if behaviour == "429":
            return send(self, 429, b'{"error": "slow down"}', headers={"Retry-After": "0"})
        if behaviour == "500":
            return send(self, 500, b'{"error": "boom"}')
        if behaviour == "slow":
            time.sleep(3)
        if behaviour == "malformed":
            return send(self, 200, b"<html>not json</html>", "text/html")
        if behaviour == "huge":
            return send(self, 200, b'{"pad": "' + b"x" * 3_000_000 + b'"}')
        model = (body or {}).get("model", "")
        if behaviour == "no_choices":
            return send(self, 200, json.dumps({"id": "x", "model": model}).encode())
        if behaviour == "trickle":  # a byte every 0.3 s: no read times out, the deadline must end it
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.3)
            return None
        prompt = ((body or {}).get("messages") or [{}])[-1].get("content", "")
        query, passage = _QUERY.search(prompt), _PASSAGE.search(prompt)
        grade = overlap_grade(query.group(1) if query else "", passage.group(1) if passage else "")
        grade = min(3, grade + server.shift)
        if query and passage and passage.start() < query.start():
            grade = max(0, grade - server.document_first_penalty)
        content = {"no_grade": "I cannot judge this passage.", "out_of_scale": "##final score: 7",
                   "two_scores": "##final score: 1\n##final score: 3"}.get(behaviour or "", f"##final score: {grade}")
        return send(self, 200, json.dumps(_completion(content, model)).encode())


@contextlib.contextmanager
def rule_server() -> Iterator[RuleServer]:
    """A RuleServer running in a thread for the duration of the block."""
    server = RuleServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
