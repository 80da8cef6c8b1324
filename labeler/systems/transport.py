"""A deadline and a size cap for one HTTP call, enforced on the socket (for `HttpSystem`).

httpx's `timeout` bounds each read, not the call: a server that sends a byte every 2 s never
trips a 5 s read timeout and holds the caller for as long as it likes, and `response.json()`
buffers an answer whole, however big. Here every socket operation of a call (connect, TLS,
write, every read, the headers included) waits at most what is left of the call's deadline, so
a call ends within `deadline` plus one scheduling slice; and the answer is read in chunks,
counted against `max_bytes`, the connection closed as soon as either is passed.

The deadline travels in a thread-local (httpx's sync client does all of a call's I/O in the
calling thread), set by `call_deadline` around one call.
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

_LOCAL = threading.local()


class DeadlinePassed(Exception):
    """The call's deadline passed (raised inside the transport; mapped by the caller)."""


class AnswerTooBig(Exception):
    """The answer passed the byte cap (its declared Content-Length, or the bytes read so far)."""


def _left(timeout: float | None) -> float | None:
    """The socket timeout to use now: `timeout`, cut to what is left of the call's deadline."""
    until = getattr(_LOCAL, "until", None)
    if until is None:
        return timeout
    left = until - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the call's deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    """A network stream whose every wait is cut to the call's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync backend, its streams wrapped in `_Stream`."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout), local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover - not used
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:  # pragma: no cover - httpcore sleeps only between its own retries
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose sockets honour `call_deadline`."""

    def __init__(self, limits: httpx.Limits) -> None:
        super().__init__(limits=limits)
        self._pool = httpcore.ConnectionPool(  # the SSL context httpx built (loading CA certificates costs)
            ssl_context=self._pool._ssl_context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=_Backend())


@contextlib.contextmanager
def call_deadline(seconds: float) -> Iterator[float]:
    """Bound every socket wait in this thread to `seconds` from now; yields the monotonic end."""
    until = _LOCAL.until = time.monotonic() + seconds
    try:
        yield until
    finally:
        _LOCAL.until = None


@dataclass(frozen=True)
class Answer:
    """A whole HTTP answer read within the caps: status, headers and body bytes."""

    status_code: int
    headers: Mapping[str, str]  # case-insensitive (httpx.Headers)
    content: bytes
    encoding: str = "utf-8"

    @property
    def text(self) -> str:
        """The body decoded (undecodable bytes replaced: this text is shown, never parsed)."""
        return self.content.decode(self.encoding, errors="replace")

    def json(self) -> Any:
        """The body as JSON (json.JSONDecodeError / UnicodeDecodeError when it is not)."""
        return json.loads(self.content.decode(self.encoding))


def read_answer(response: httpx.Response, max_bytes: int, until: float) -> Answer:
    """Read a streamed response's body chunk by chunk; AnswerTooBig past `max_bytes`,
    DeadlinePassed after `until` (monotonic). The caller closes the response (and so the
    connection, when the body was not read to its end)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise AnswerTooBig(f"{int(declared):,} bytes declared")
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise AnswerTooBig(f"{len(body):,} bytes read")
        if time.monotonic() > until:
            raise DeadlinePassed()
    return Answer(response.status_code, response.headers, bytes(body), response.encoding or "utf-8")
