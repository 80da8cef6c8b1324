"""The built-in pipeline as a small HTTP JSON API (`labeler serve CORPUS`).

The model, index (and BM25 / reranker, as the config says) load once, at start, before the
server listens. Requests:

    POST /search   body {"query": "How many vacation days?", "k": 10}    ("k" optional)
    GET  /search?q=How+many+vacation+days%3F&k=10                        ("k" optional)
      -> 200 {"hits": [{"doc_id": "leave-001", "score": 0.71, "title": "Annual vacation allowance"}, ...],
              "took_ms": 4.2}
         hits best first, at most k (default: the server's -k), one per document (its best chunk's score)
    GET  /health
      -> 200 {"status": "ok", "documents": 116, "chunks": 116, "model": "...", "mode": "dense",
              "config_hash": "...", "corpus_fingerprint": "sha256:...", "searches": 0, "batches": 0}

Errors are JSON too, `{"error": "<one line>"}`, never a traceback: 400 a malformed request (body not
JSON or nested too deeply, "query" missing or empty or holding an unpaired surrogate, a query
string that is not UTF-8, k not a whole number in 1..1000, unknown body keys, no Content-Length), 404 an unknown path, 405 a method the path does not take, 413 a body over 64 KiB,
500 an unexpected error (its traceback goes to the server's error log under the incident id
quoted), 503 when `max_connections` (64) are open already (with Retry-After: 1). Content type is
`application/json; charset=utf-8`; HTTP/1.1 keep-alive. A connection has `read_timeout` (10 s) to
send each whole request, or to start the next one, and is closed otherwise (`serve_limits`).

An endpoint declaration that scores this server (see `labeler.systems.endpoint_spec`):

    name = "labeler-serve"
    url = "http://127.0.0.1:8000/search"
    body = {query = "{query}", k = "{k}"}
    response = {hits = "hits", id = "doc_id", score = "score"}

Concurrent requests are micro-batched: one worker thread encodes and searches the waiting queries
in one call. When several connections are active it waits up to `batch_window` (5 ms) for each of
them to have a query in the batch; a lone client never waits. So eight clients cost about one
batched encode instead of eight single ones, and a single client's latency is unchanged.
"""
from __future__ import annotations

import json
import queue
import sys
import threading
import time
import urllib.parse
from concurrent.futures import Future
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from labeler.bugs import record_bug
from labeler.config import RunConfig
from labeler.errors import ConfigError, LabelerError
from labeler_edge.serve_limits import MAX_CONNECTIONS, READ_TIMEOUT, ConnectionLimits
from labeler_edge.serve_requests import (MAX_BODY, MAX_K, BadRequest, parse_body, parse_k, parse_query,  # noqa: F401
                                    parse_search_url, whole_number)

MAX_BATCH = 64
BATCH_WINDOW = 0.005  # seconds a batch may wait for the searches of other active clients
ACTIVE_SECONDS = 0.5
_DRAIN_LIMIT = 16 * MAX_BODY


class SearchService:
    """One opened Retriever behind a micro-batcher: `search(query, k)` from any thread.

    The worker thread is the only caller of the retriever, so searching needs no further locks.
    """

    def __init__(self, retriever, config: RunConfig, *, batch_window: float = BATCH_WINDOW,
                 max_batch: int = MAX_BATCH) -> None:
        self.retriever = retriever
        self.config = config
        self.params = config.search_params()
        self.batch_window = batch_window
        self.max_batch = max_batch
        self.searches = 0
        self.batches = 0
        self._clients: dict[Any, float] = {}
        self._clients_lock = threading.Lock()
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._worker = threading.Thread(target=self._run, name="search-batcher", daemon=True)
        self._worker.start()

    def search(self, question: str, k: int) -> list:
        """The top k DocHits for `question` (waits for its batch)."""
        future: Future = Future()
        self._queue.put((question, k, future))
        return future.result()

    def close(self) -> None:
        """Stop the worker once the queued searches are done."""
        self._queue.put(None)
        self._worker.join(timeout=10)

    def client_active(self, client: Any) -> None:
        """Note that `client` (a connection) just sent a request."""
        with self._clients_lock:
            self._clients[client] = time.monotonic()

    def client_gone(self, client: Any) -> None:
        """Note that `client` closed its connection."""
        with self._clients_lock:
            self._clients.pop(client, None)

    def active_clients(self) -> int:
        """Connections that sent a request within the last ACTIVE_SECONDS: how many searches to expect at once."""
        now = time.monotonic()
        with self._clients_lock:
            for client in [c for c, t in self._clients.items() if now - t > ACTIVE_SECONDS]:
                del self._clients[client]
            return len(self._clients)

    def _collect(self, first) -> list:
        # Take every search already waiting; while fewer than the active clients have arrived, wait
        # up to batch_window for theirs. A lone client never waits.
        batch = [first]
        target = min(self.max_batch, self.active_clients())
        deadline = time.monotonic() + self.batch_window
        while len(batch) < self.max_batch:
            remaining = deadline - time.monotonic() if len(batch) < target else 0
            try:
                item = self._queue.get(timeout=remaining) if remaining > 0 else self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._queue.put(None)  # stop after this batch
                break
            batch.append(item)
        return batch

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = self._collect(first)
            by_k: dict[int, list] = {}
            for item in batch:
                by_k.setdefault(item[1], []).append(item)
            for k, items in by_k.items():
                self._search_batch(k, items)

    def _search_batch(self, k: int, items: list) -> None:
        try:
            results = self.retriever.search_many([q for q, _, _ in items], self.params.with_(k=k))
        except Exception as exc:  # noqa: BLE001 - handed to the waiting request threads
            if len(items) > 1:  # one query's failure must not fail the others batched with it
                for item in items:
                    self._search_batch(k, [item])
            else:
                items[0][2].set_exception(exc)
            return
        self.searches += len(items)
        self.batches += 1
        for (_, _, future), hits in zip(items, results):
            future.set_result(hits)

    def health(self) -> dict[str, Any]:
        """What GET /health answers ("retriever": the mode's old name, kept for clients that read it)."""
        info = self.retriever.info
        return {"status": "ok", "documents": info["documents"], "chunks": info["chunks"], "model": info["model"],
                "mode": self.config.mode, "retriever": self.config.mode, "config_hash": self.config.config_hash,
                "corpus_fingerprint": info["corpus_fingerprint"], "searches": self.searches, "batches": self.batches}

    def answer(self, question: str, k: int) -> dict[str, Any]:
        """The JSON body of a search response."""
        t0 = time.perf_counter()
        hits = self.search(question, k)
        corpus = self.retriever.corpus
        return {"hits": [{"doc_id": h.doc_id, "score": h.score, "title": corpus.get(h.doc_id).title} for h in hits],
                "took_ms": round((time.perf_counter() - t0) * 1000, 3)}


class SearchHandler(BaseHTTPRequestHandler):
    """Routes /search and /health; every answer, errors included, is JSON."""

    protocol_version = "HTTP/1.1"
    server_version = "labeler-serve"
    # Headers and body go out in two writes: with Nagle's algorithm on, a keep-alive client's
    # delayed ACK would hold the body back ~40 ms per request.
    disable_nagle_algorithm = True
    server: "SearchServer"

    @property
    def service(self) -> SearchService:
        """The server's search service."""
        return self.server.service

    @property
    def default_k(self) -> int:
        """k when a request gives none."""
        return self.server.default_k

    @property
    def access_log(self) -> bool:
        """Whether to log every request on stderr."""
        return self.server.access_log

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        # backslashreplace: a stray surrogate in a message becomes a JSON "\\udxxx" escape, never a failed reply
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "backslashreplace")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (bad request line, URI too long) as JSON, not HTML."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # an unparsable request line: answer with a status line anyway
            self.request_version = "HTTP/1.0"
        try:
            self._send_json(code, {"error": message or self.responses.get(code, ("error",))[0]})
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        """The access log, on stderr, only with --access-log."""
        if self.access_log:
            super().log_message(format, *args)

    def setup(self) -> None:
        """Every socket read waits at most the read timeout too (the watchdog bounds the whole request)."""
        self.timeout = self.server.limits.read_timeout
        super().setup()

    def handle_one_request(self) -> None:
        """One request, which must arrive whole within the read timeout (`serve_limits`)."""
        self.server.limits.reading(self.connection)
        try:
            super().handle_one_request()
        finally:
            self.server.limits.read(self.connection)

    def finish(self) -> None:
        """The connection is closing: it no longer counts as an active client."""
        if self.server.service is not None:
            self.server.service.client_gone(self.client_address)
        super().finish()

    def _route(self, method: str) -> None:
        t0 = time.perf_counter()
        if self.server.service is not None:
            self.service.client_active(self.client_address)
        try:
            url = urllib.parse.urlsplit(self.path)
            allowed = {"/search": ("GET", "POST"), "/health": ("GET",)}.get(url.path)
            if allowed is None:
                raise BadRequest(404, f"no such path {url.path!r}; use POST /search, GET /search?q=... or GET /health")
            if method not in allowed:
                raise BadRequest(405, f"{url.path} takes {' or '.join(allowed)}, not {method}")
            if url.path == "/health":
                self._send_json(200, self.service.health())
                return
            if method == "GET":
                query, k = parse_search_url(url.query, self.default_k)
            else:
                query, k = parse_body(self._read_body(), self.default_k)
            self.server.limits.read(self.connection)  # the request is in: the search has no read deadline
            self._send_json(200, self.service.answer(query, k))
        except BadRequest as exc:
            self._send_json(exc.status, {"error": str(exc)})
        except LabelerError as exc:
            self._send_json(500, {"error": str(exc)})
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away
        except Exception as exc:  # noqa: BLE001 - the edge: a bug becomes one line + an incident in the log
            incident, _ = record_bug(exc, f"labeler serve {method} {self.path[:200]}")
            self._send_json(500, {"error": f"internal error (incident {incident})"})
        finally:
            if self.access_log:
                self.log_message("%s %s %.1f ms", method, self.path[:200], (time.perf_counter() - t0) * 1000)

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            raise BadRequest(400, "send the body with a Content-Length, not chunked")
        length = self.headers.get("Content-Length") or ""
        size = whole_number(length)  # None: not ASCII digits, or more digits than any real body has
        if size is None and not (length.strip().isascii() and length.strip().isdigit()):
            self.close_connection = True
            raise BadRequest(400, "a POST needs a Content-Length header (the body's size in bytes)")
        if size is None or size > MAX_BODY:
            if size is not None and size <= _DRAIN_LIMIT:  # read and drop it: the client reads the 413, not a reset
                left = size
                while left > 0 and (chunk := self.rfile.read(min(left, MAX_BODY))):
                    left -= len(chunk)
            self.close_connection = True
            shown = f"{size:,} bytes" if size is not None else f"a {len(length.strip()):,}-digit number of bytes"
            raise BadRequest(413, f"the body is {shown}; the limit is {MAX_BODY:,}")
        return self.rfile.read(size)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        """GET /search?q=...&k=... and GET /health."""
        self._route("GET")

    def do_POST(self) -> None:  # noqa: N802
        """POST /search with a JSON body."""
        self._route("POST")

    def _refuse(self) -> None:
        if self.headers.get("Content-Length", "0").strip() not in ("", "0"):
            self.close_connection = True
        self._route(self.command)

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _refuse


class SearchServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer with a deep listen backlog that logs, never prints, handler failures,
    and bounds what a connection may hold (`serve_limits`: read timeout, connection cap).

    It binds at construction; `service` may be attached afterwards (before `serve_forever`), so a
    port already in use is reported before minutes of loading.
    """

    request_queue_size = 128
    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: SearchService | None = None, *, default_k: int = 10,
                 access_log: bool = False, read_timeout: float = READ_TIMEOUT,
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.service = service
        self.default_k = default_k
        self.access_log = access_log
        super().__init__(address, SearchHandler)
        self.limits = ConnectionLimits(read_timeout, max_connections)

    def process_request(self, request, client_address) -> None:
        """A thread for the connection, or a 503 at once when `max_connections` are open."""
        if not self.limits.admit():
            self.limits.refuse(request)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        """Serve the connection; its slot is free again when it closes."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.limits.release()

    def server_close(self) -> None:
        """Stop listening and stop the read watchdog."""
        super().server_close()
        if hasattr(self, "limits"):
            self.limits.stop()

    def handle_error(self, request, client_address) -> None:
        """A client that hung up is not an error; anything else goes to the error log."""
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, (ConnectionError, TimeoutError)):
            record_bug(exc, f"labeler serve connection from {client_address[0]}")


def make_server(service: SearchService | None, host: str = "127.0.0.1", port: int = 8000, *, default_k: int = 10,
                access_log: bool = False, read_timeout: float = READ_TIMEOUT,
                max_connections: int = MAX_CONNECTIONS) -> SearchServer:
    """A bound (not yet serving) server; port 0 picks a free port (`server.server_port`).

    Attach the service (`server.service = ...`) before `serve_forever` if none is given here.
    """
    try:
        return SearchServer((host, port), service, default_k=default_k, access_log=access_log,
                            read_timeout=read_timeout, max_connections=max_connections)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                          hint="choose another --port, or stop what is using this one.") from None


def open_service(corpus, config: RunConfig, *, progress=None, cache_root=None, batch_window: float = BATCH_WINDOW,
                 max_batch: int = MAX_BATCH) -> SearchService:
    """Open the retriever (model, index, BM25/reranker as configured) behind a SearchService, warmed up."""
    from labeler.retrieval import open_retriever

    retriever = open_retriever(corpus, config, progress=progress, cache_root=cache_root)
    service = SearchService(retriever, config, batch_window=batch_window, max_batch=max_batch)
    # Warmed on the worker thread, the only thread that ever runs the model (one OpenMP thread team);
    # this loads a reranker too, before the server listens.
    service.search("warm up", 1)
    service.searches = service.batches = 0
    return service
