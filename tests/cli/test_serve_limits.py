"""What one connection may hold of `labeler serve`, with real sockets against a real server on
localhost (no model needed: an unknown path answers 404 without one): a slow-loris client is
closed at the read timeout whatever part of the request it trickles, and past the connection cap
a new connection gets a JSON 503 at once instead of a thread."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from labeler_edge.serve import make_server


@pytest.fixture
def server():
    """A server with a 1 s read timeout and room for 4 connections, serving in a thread."""
    srv = make_server(None, port=0, read_timeout=1.0, max_connections=4)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def connect(srv) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.server_port), timeout=5)
    return sock


def seconds_until_closed(sock: socket.socket, trickle: bytes, every: float = 0.3) -> float:
    """Send `trickle` a byte every `every` seconds; the seconds until the server closed the connection."""
    t0 = time.monotonic()
    try:
        for byte in trickle:
            sock.sendall(bytes([byte]))
            time.sleep(every)
        return float("inf")  # sent it all: never closed
    except OSError:  # reset or broken pipe: closed
        return time.monotonic() - t0
    finally:
        sock.close()


def get(srv, path: str = "/nope") -> tuple[int, dict, str]:
    with connect(srv) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body), head.decode()


@pytest.mark.parametrize("trickle", [
    b"GET /search?q=leave HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40,  # a header that never ends
    b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n" + b'{"query": "' + b"a" * 60,  # the body
], ids=["headers", "body"])
def test_serve_closes_a_slow_loris_connection_at_the_read_timeout(server, trickle):
    # A byte every 0.3 s never trips a 1 s per-read timeout; the request's deadline does.
    seconds = seconds_until_closed(connect(server), trickle)
    assert 0.9 <= seconds < 3.0, seconds
    assert server.limits.timed_out >= 1
    assert get(server)[0] == 404  # the server answers others meanwhile


def test_serve_idle_keep_alive_connection_is_closed_after_the_read_timeout(server):
    with connect(server) as sock:
        sock.sendall(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while not answer.endswith(b"}"):  # the whole 404 (head, then its JSON body)
            answer += sock.recv(65536)
        assert answer.startswith(b"HTTP/1.1 404")
        t0 = time.monotonic()
        assert sock.recv(65536) == b""  # closed by the server, not left holding a thread
        assert time.monotonic() - t0 < 3.0


def test_serve_refuses_connections_past_the_cap_with_a_json_503(server):
    idle = [connect(server) for _ in range(4)]
    deadline = time.monotonic() + 3
    while server.limits.open < 4:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    threads = threading.active_count()
    t0 = time.monotonic()
    status, body, head = get(server)
    assert status == 503 and "4 connections are open" in body["error"] and "Retry-After: 1" in head
    assert time.monotonic() - t0 < 0.5  # answered at once, not queued behind the idle ones
    extra = [connect(server) for _ in range(20)]
    time.sleep(0.2)
    assert threading.active_count() <= threads + 1 and server.limits.refused >= 21  # no thread each
    for sock in idle + extra:
        sock.close()
    deadline = time.monotonic() + 3
    while server.limits.open:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert get(server)[0] == 404  # slots free again
