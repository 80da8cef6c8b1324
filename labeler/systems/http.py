"""`HttpSystem`: a search endpoint declared as data (see `endpoint_spec`), called over httpx.

Synchronous API, threads inside: `search_many` runs up to `concurrency` requests at once (a
semaphore shared by every call on the system, so `search` from several threads obeys it too),
spaced to at most `rate_limit` requests per second. Connection errors, 429 and 5xx are retried
with exponential backoff (`backoff`, doubled each time) or the server's Retry-After (seconds or
an HTTP date), every wait capped at `max_retry_wait`. A read timeout is not retried (the server
is slow, and a retry doubles its load): the question fails with kind "timeout". Every call has a
total `deadline` (connect, headers and body, however slowly they trickle) and its answer a size
cap `max_bytes`, both enforced while the answer streams in (`transport`): the question fails with
kind "deadline" or "too_large", the connection closed, never an empty ranking.

No secret comes back out: every value a `${NAME}` resolved to (and every literal sensitive header)
is masked as *** in error messages and in a test query's raw answer, whatever the endpoint echoes.
"""
from __future__ import annotations

import email.utils
import json
import math
import random
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, Callable

from labeler.progress import Progress
from labeler.systems.base import Hit, QueryProbe, QuestionError, SearchFailed, System, SystemRun, check_k, doc_hits
from labeler.systems.endpoint_spec import (EndpointSpec, ResponseMapping, map_response, redact, redact_json,
                                           render_request, secret_values)
from labeler.systems.secrets import mask_secret

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from labeler.systems.transport import Answer

_SHOWN_BODY = 200  # characters of an error response quoted in a message


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A Retry-After header as seconds to wait (>= 0), or None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class RateLimiter:
    """At most `per_second` starts per second across threads: each caller reserves the next slot."""

    def __init__(self, per_second: float | None) -> None:
        self.interval = 1.0 / per_second if per_second else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block until this caller's slot."""
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


class HttpSystem(System):
    """A declared HTTP endpoint as a System (use as a context manager, or call close())."""

    kind = "http"

    def __init__(self, spec: EndpointSpec | Mapping[str, Any], *, source: str | None = None,
                 allowed_hosts: frozenset[str] | None = None) -> None:
        """`allowed_hosts` ("host" or "host:port", lower case), when given, are the only hosts any
        request may go to, redirects included; None allows every host."""
        self.spec = spec if isinstance(spec, EndpointSpec) else EndpointSpec.from_dict(spec, source=source)
        self.source = source
        self.allowed_hosts = allowed_hosts
        self.name = self.spec.name
        self.mapping = ResponseMapping.of(self.spec)
        self._limiter = RateLimiter(self.spec.rate_limit)
        self._slots = threading.BoundedSemaphore(self.spec.concurrency)
        self._client = None
        self._client_lock = threading.Lock()

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def client(self) -> "httpx.Client":
        """One httpx.Client (connection pool sized to the concurrency), opened on first use."""
        with self._client_lock:
            if self._client is None:
                self._client = open_client(self.spec.concurrency, self.spec.timeout,
                                           self._check_host if self.allowed_hosts is not None else None)
            return self._client

    def _check_host(self, request: "httpx.Request") -> None:
        if not host_allowed(request.url.host, request.url.port or DEFAULT_PORTS.get(request.url.scheme),
                            self.allowed_hosts):
            raise SearchFailed(f"{request.url.host} is not a host this server may call", kind="host_refused",
                               hint="the server's operator lists the hosts declared endpoints may call.")

    def close(self) -> None:
        """Close the connection pool."""
        with self._client_lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def describe(self) -> dict[str, Any]:
        """The declaration with literal secrets masked (`${NAME}` references shown as written)."""
        return self.spec.describe()

    def check_environment(self) -> None:
        """Raise ConfigError now if a `${NAME}` the declaration references is not set."""
        render_request(self.spec, "", 1, source=self.source)

    def _redacted(self, exc: SearchFailed) -> SearchFailed:
        """`exc` with the declaration's secret values masked in its message."""
        return SearchFailed(redact(exc.message, secret_values(self.spec)), kind=exc.kind, attempts=exc.attempts,
                            hint=exc.hint)

    def _answer(self, question: str, k: int, *, retries: int) -> tuple[tuple[Hit, ...], int]:
        """(hits, attempts) for one question; SearchFailed, secrets masked, when it cannot be answered."""
        try:
            response, attempts = self._send(question, k, retries=retries)
            return tuple(self._ranked(response, k, attempts)), attempts
        except SearchFailed as exc:
            raise self._redacted(exc) from None

    def _send(self, question: str, k: int, *, retries: int) -> tuple["Answer", int]:
        """Send one question (with retries): (answer, attempts); SearchFailed when out of attempts."""
        method, url, headers, body = render_request(self.spec, question, k, source=self.source)
        return send_with_retries(self.client, method, url, headers, body, self.spec, retries=retries,
                                 slots=self._slots, limiter=self._limiter,
                                 redacted=lambda text: redact(text, secret_values(self.spec)))

    def _ranked(self, response: "Answer", k: int, attempts: int) -> list[Hit]:
        try:
            data = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            shown = redact(response.text, secret_values(self.spec))[:80]  # masked before it is cut
            raise SearchFailed(f"the response is not JSON ({exc}): {shown!r}", kind="bad_json",
                               attempts=attempts, hint="the endpoint must answer with JSON.") from None
        try:
            return list(doc_hits(map_response(self.mapping, data), k))
        except SearchFailed as exc:
            exc.attempts = attempts
            raise

    # -- the System protocol -----------------------------------------------------------------
    def search(self, question: str, k: int) -> list[Hit]:
        """Top k documents from the endpoint (retried as declared); SearchFailed when it cannot answer."""
        k = check_k(k)
        return list(self._answer(question, k, retries=self.spec.retries)[0])

    def search_many(self, questions: Mapping[str, str], k: int, *, progress: Progress | None = None) -> SystemRun:
        """Every question, `concurrency` at a time and within `rate_limit`: hits and errors per question."""
        k = check_k(k)
        self.check_environment()  # a missing secret fails the run once, not every question
        t0 = time.perf_counter()
        ids = list(questions)

        def one(query_id: str) -> tuple[Any, int]:
            try:
                return self._answer(questions[query_id], k, retries=self.spec.retries)
            except SearchFailed as exc:
                return QuestionError.of(query_id, exc), exc.attempts

        # Progress is reported from the calling thread (a UI's progress bar may only be touched there).
        with ThreadPoolExecutor(max_workers=min(self.spec.concurrency, max(1, len(ids))),
                                thread_name_prefix=f"system-{self.name}") as pool:
            futures = {pool.submit(one, q): q for q in ids}
            for done, _ in enumerate(as_completed(futures), start=1):
                if progress and (done % 25 == 0 or done == len(ids)):
                    progress(done, len(ids), "searching")
            results = [f.result() for f in futures]
        hits = {q: r for q, (r, _) in zip(ids, results) if not isinstance(r, QuestionError)}
        errors = {q: r for q, (r, _) in zip(ids, results) if isinstance(r, QuestionError)}
        calls = sum(n for _, n in results)
        return SystemRun(self.describe(), k, tuple(ids), hits, errors, calls, time.perf_counter() - t0)

    def test_query(self, question: str, k: int = 10) -> QueryProbe:
        """One request, no retries: the raw answer (text and JSON), the mapped hits or the error."""
        k = check_k(k)
        # ConfigError for a missing secret (before anything is sent)
        method, url, headers, body = render_request(self.spec, question, k, source=self.source)
        shown = {"method": method, "url": self.spec.describe()["url"],
                 "json": redact_json(body, secret_values(self.spec)),
                 "headers": {n: mask_secret(n, self.spec.headers[n]) for n in headers}}
        t0 = time.perf_counter()
        try:
            response, _ = self._send(question, k, retries=0)
        except SearchFailed as exc:
            return QueryProbe(question, error=str(self._redacted(exc)), request=shown, seconds=time.perf_counter() - t0)
        secrets = secret_values(self.spec)
        try:
            raw_json = redact_json(response.json(), secrets)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raw_json = None
        try:
            hits, error = tuple(self._ranked(response, k, 1)), None
        except SearchFailed as exc:
            hits, error = (), str(self._redacted(exc))
        return QueryProbe(question, hits=hits, error=error, status=response.status_code,
                          raw_text=redact(response.text, secrets), raw_json=raw_json, request=shown,
                          seconds=time.perf_counter() - t0)


def wait_before_retry(attempt: int, retry_after: float | None, backoff: float, max_retry_wait: float) -> None:
    """Sleep before retry `attempt`: the server's Retry-After, else `backoff` doubled per attempt
    (with jitter), capped at `max_retry_wait`."""
    delay = retry_after if retry_after is not None else backoff * 2 ** (attempt - 1) * random.uniform(0.8, 1.0)
    time.sleep(min(delay, max_retry_wait))


def send_with_retries(client: "httpx.Client", method: str, url: str, headers: Mapping[str, str], body: Any,
                      limits: Any, *, retries: int, slots: threading.BoundedSemaphore, limiter: RateLimiter,
                      redacted: Callable[[str], str]) -> tuple["Answer", int]:
    """One request with retries: (answer, attempts); SearchFailed when out of attempts.

    `limits` carries timeout, deadline, max_bytes, backoff and max_retry_wait (an EndpointSpec, or
    a judge's settings). Connection errors, connect timeouts, 429 and 5xx are retried (Retry-After
    honoured); each call is bounded by the deadline and its answer by max_bytes (neither retried:
    a slow or huge answer would only come again). `redacted` masks secrets in quoted answers."""
    import httpx

    from labeler.systems.transport import AnswerTooBig, DeadlinePassed, call_deadline, read_answer

    attempt = 0
    while True:
        attempt += 1
        until = math.inf
        try:
            with slots:  # the rate slot is taken inside: a freed slot never lets a burst through
                limiter.wait()
                with call_deadline(limits.deadline) as until, \
                        client.stream(method, url, headers=headers, json=body) as streamed:
                    response = read_answer(streamed, limits.max_bytes, until)
        except AnswerTooBig as exc:
            raise SearchFailed(f"the answer from {method} {_shown(url)} is over max_bytes = "
                               f"{limits.max_bytes:,} bytes ({exc}): not read further", kind="too_large",
                               attempts=attempt,
                               hint="ask for a shorter answer, or raise max_bytes in the declaration.") from None
        except (DeadlinePassed, httpx.TimeoutException) as exc:
            if time.monotonic() >= until:
                raise SearchFailed(f"no whole answer from {method} {_shown(url)} within the deadline of "
                                   f"{limits.deadline:g}s", kind="deadline", attempts=attempt,
                                   hint="raise deadline in the declaration, or check the endpoint.") from None
            if isinstance(exc, httpx.ConnectTimeout) and attempt <= retries:
                wait_before_retry(attempt, None, limits.backoff, limits.max_retry_wait)
                continue
            raise SearchFailed(f"no answer from {method} {_shown(url)} within {limits.timeout:g}s",
                               kind="timeout", attempts=attempt,
                               hint="raise timeout in the declaration, or check the endpoint.") from None
        except httpx.TransportError as exc:
            if attempt <= retries:
                wait_before_retry(attempt, None, limits.backoff, limits.max_retry_wait)
                continue
            raise SearchFailed(f"cannot reach {method} {_shown(url)}: {exc or type(exc).__name__}"
                               f" ({attempt} attempts)", kind="connection", attempts=attempt,
                               hint="check the url and that the endpoint is running.") from None
        status = response.status_code
        if (status == 429 or status >= 500) and attempt <= retries:
            wait_before_retry(attempt, retry_after_seconds(response.headers.get("Retry-After")),
                              limits.backoff, limits.max_retry_wait)
            continue
        if status >= 400:
            text = redacted(response.text)[:_SHOWN_BODY].replace("\n", " ")
            hint = ("check the headers and the ${NAME} secrets they reference." if status in (401, 403)
                    else "check the request templates against the endpoint's API (test query).")
            raise SearchFailed(f"HTTP {status} from {method} {_shown(url)}"
                               f"{f' after {attempt} attempts' if attempt > 1 else ''}: {text}",
                               kind="http_status", attempts=attempt, hint=hint)
        return response, attempt


def open_client(concurrency: int, timeout: float, check_host: Callable | None = None) -> "httpx.Client":
    """An httpx.Client whose sockets honour `call_deadline`, its pool sized to `concurrency`
    (`check_host`: a request hook that refuses hosts, redirects included)."""
    import httpx

    from labeler.systems.transport import DeadlineTransport

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    hooks = {"request": [check_host]} if check_host is not None else {}
    return httpx.Client(timeout=timeout, transport=DeadlineTransport(limits), follow_redirects=True,
                        event_hooks=hooks)


DEFAULT_PORTS = {"http": 80, "https": 443}


def host_allowed(host: str, port: int | None, allowed: frozenset[str] | None) -> bool:
    """Whether `host`:`port` is listed in `allowed` (entries "host" for any port, or "host:port");
    everything is allowed when `allowed` is None."""
    if allowed is None:
        return True
    host = host.lower().strip("[]")
    return host in allowed or f"{host}:{port}" in allowed


def _shown(url: str) -> str:
    """A URL as quoted in a message: without its query string (which may hold a secret)."""
    return url.split("?", 1)[0]
