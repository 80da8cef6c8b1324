"""A declared endpoint's deadline and size cap against real misbehaving servers on localhost: one
that trickles a byte every 2 s (in its headers or its body), one that streams 100 MB, one that
declares 100 MB. Each is an error for that question, named, within the deadline, in bounded memory."""
from __future__ import annotations

import socket
import threading
import time
import tracemalloc

import pytest

from labeler.errors import ConfigError
from labeler.systems import EndpointSpec, HttpSystem

ANSWER = b'{"results": [{"id": "d1", "score": 1.0}]}'


class Misbehaving:
    """A raw-socket HTTP server: the request line's path says how to misbehave."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.sent = 0  # bytes of the huge answer written before the client hung up
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            path = request.split()[1].decode().split("?")[0]
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            try:
                if path == "/trickle-head":  # a byte every 2 s, ten of them, before any header ends
                    for byte in head[:10]:
                        conn.sendall(bytes([byte]))
                        time.sleep(2)
                elif path == "/trickle-body":  # headers at once, then the body a byte every 2 s
                    conn.sendall(head + f"Content-Length: {len(ANSWER)}\r\n\r\n".encode())
                    for byte in ANSWER[:10]:
                        conn.sendall(bytes([byte]))
                        time.sleep(2)
                elif path == "/huge":  # 100 MB, no Content-Length: only counting the bytes stops it
                    conn.sendall(head + b"\r\n" + b'{"results": [')
                    chunk = b'{"id": "d", "score": 1.0},' * 2500  # 65 kB, one object reused
                    while self.sent < 100_000_000:
                        conn.sendall(chunk)
                        self.sent += len(chunk)
                elif path == "/declared-huge":
                    conn.sendall(head + b"Content-Length: 100000000\r\n\r\n" + b" " * 65536)
                    time.sleep(5)
                else:
                    conn.sendall(head + f"Content-Length: {len(ANSWER)}\r\n\r\n".encode() + ANSWER)
            except OSError:  # the client closed the connection: what a cap should do
                pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server():
    s = Misbehaving()
    yield s
    s.close()


def declared(server: Misbehaving, path: str, **changes) -> dict:
    return {"name": "bad", "url": server.url + path + "?q={query}&k={k}", "method": "GET",
            "response": {"hits": "results", "id": "id", "score": "score"},
            "timeout": 5, "retries": 0, **changes}


def test_http_system_deadline_ends_a_trickling_call_whatever_phase_it_trickles_in(server):
    # timeout = 5 is never tripped (a byte every 2 s); the 2.5 s deadline ends each call.
    questions = {"head": "trickle-head", "body": "trickle-body"}
    with HttpSystem({**declared(server, "/{query}"), "deadline": 2.5, "concurrency": 2}) as system:
        t0 = time.monotonic()
        run = system.search_many(questions, 3)
        seconds = time.monotonic() - t0
    assert run.error_counts() == {"deadline": 2}, run.errors
    assert "within the deadline of 2.5s" in run.errors["body"].message
    assert 2.4 <= seconds < 4.5  # both in parallel: the deadline, plus a margin for a busy machine


def test_http_test_query_deadline_holds_without_retries(server):
    with HttpSystem(declared(server, "/trickle-body", deadline=1.5, retries=3)) as system:
        t0 = time.monotonic()
        probe = system.test_query("anything")
        seconds = time.monotonic() - t0
    assert probe.error and "deadline of 1.5s" in probe.error and not probe.hits
    assert seconds < 3.5


def test_http_system_size_cap_stops_reading_a_huge_answer_in_bounded_memory(server):
    with HttpSystem(declared(server, "/huge", max_bytes=1_000_000)) as system:
        tracemalloc.start()
        try:
            run = system.search_many({"q": "x"}, 3)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    error = run.errors["q"]
    assert error.kind == "too_large" and "over max_bytes = 1,000,000 bytes" in error.message
    assert peak < 8_000_000  # the cap plus a chunk or two, not the 100 MB the server meant to send
    time.sleep(0.2)
    assert server.sent < 50_000_000  # the connection was closed, the server stopped short


def test_http_system_size_cap_refuses_a_declared_length_before_reading(server):
    with HttpSystem(declared(server, "/declared-huge", max_bytes=1_000_000)) as system:
        t0 = time.monotonic()
        run = system.search_many({"q": "x"}, 3)
    assert run.errors["q"].kind == "too_large" and "100,000,000 bytes declared" in run.errors["q"].message
    assert time.monotonic() - t0 < 2  # not the 5 s the server holds the connection open


def test_http_system_within_its_limits_answers_as_before(server):
    with HttpSystem(declared(server, "/ok", deadline=2, max_bytes=len(ANSWER))) as system:
        assert [h.doc_id for h in system.search("q", 3)] == ["d1"]


def test_endpoint_spec_deadline_defaults_to_ten_or_the_longer_timeout():
    base = {"name": "x", "url": "http://127.0.0.1:1/?q={query}", "response": {"hits": "h", "id": "i"}}
    assert (EndpointSpec.from_dict(base).deadline, EndpointSpec.from_dict(base).max_bytes) == (10.0, 10_000_000)
    assert EndpointSpec.from_dict({**base, "timeout": 30}).deadline == 30.0
    assert EndpointSpec.from_dict({**base, "deadline": 2}).to_dict()["deadline"] == 2.0
    with pytest.raises(ConfigError, match="max_bytes must be a positive whole number"):
        EndpointSpec.from_dict({**base, "max_bytes": 0})
