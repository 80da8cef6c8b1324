"""What `labeler serve` lets one connection hold: a thread for at most `read_timeout` seconds while
it sends a request, and one of at most `max_connections` threads.

A thread per connection (http.server's model) is cheap until clients hold threads without using
them: a slow-loris client sends a header byte every few seconds and never trips a per-read socket
timeout, and 600 of them held 600 threads. So each request (its head and body, or the wait for it
on a kept-alive connection) must arrive whole within `read_timeout` seconds of the server starting
to wait for it: a watchdog thread shuts the socket of any connection past its deadline, which ends
the blocked read at once. And past `max_connections` open connections a new one is answered at
once with a one-line JSON 503 and a Retry-After, and closed, instead of taking a thread.
"""
from __future__ import annotations

import json
import socket
import threading
import time

READ_TIMEOUT = 10.0  # seconds a connection has to send a whole request (or to start the next one)
MAX_CONNECTIONS = 64  # connections served at once; more are refused with 503
_WATCH_EVERY = 0.1  # seconds between the watchdog's rounds


class ConnectionLimits:
    """The deadlines of requests being read and the count of open connections, for one server."""

    def __init__(self, read_timeout: float = READ_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> None:
        self.read_timeout = read_timeout
        self.max_connections = max_connections
        self._reading: dict[socket.socket, float] = {}
        self._open = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self.timed_out = self.refused = 0
        threading.Thread(target=self._watch, daemon=True, name="serve-read-watchdog").start()

    # -- reading a request -----------------------------------------------------------------------
    def reading(self, conn: socket.socket) -> None:
        """`conn` starts to wait for a request: it has `read_timeout` seconds to send it whole."""
        with self._lock:
            self._reading[conn] = time.monotonic() + self.read_timeout

    def read(self, conn: socket.socket) -> None:
        """`conn`'s request has arrived whole (the search that follows has no read deadline)."""
        with self._lock:
            self._reading.pop(conn, None)

    def _watch(self) -> None:
        while not self._stopped.wait(_WATCH_EVERY):
            now = time.monotonic()
            with self._lock:
                late = [conn for conn, deadline in self._reading.items() if deadline <= now]
                for conn in late:
                    del self._reading[conn]
                self.timed_out += len(late)
            for conn in late:
                try:
                    conn.shutdown(socket.SHUT_RDWR)  # the handler's blocked read returns: it closes
                except OSError:
                    pass

    # -- open connections ------------------------------------------------------------------------
    def admit(self) -> bool:
        """Take a connection slot; False (and nothing taken) when all `max_connections` are open."""
        with self._lock:
            if self._open >= self.max_connections:
                self.refused += 1
                return False
            self._open += 1
            return True

    def release(self) -> None:
        """A connection admitted earlier has closed."""
        with self._lock:
            self._open -= 1

    @property
    def open(self) -> int:
        """Connections being served now."""
        with self._lock:
            return self._open

    def refuse(self, conn: socket.socket) -> None:
        """Answer a connection over the cap with 503 (one line of JSON, Retry-After: 1), unread."""
        body = json.dumps({"error": f"the server is busy: {self.max_connections} connections are open; "
                                    "retry in a second"}).encode()
        head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n").encode()
        try:
            conn.settimeout(1.0)  # the accept loop never waits on a client that does not read
            conn.sendall(head + body)
        except OSError:
            pass

    def stop(self) -> None:
        """End the watchdog (the server is closing)."""
        self._stopped.set()
