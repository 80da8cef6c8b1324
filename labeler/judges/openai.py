"""`OpenAIJudge`: any OpenAI-compatible `/v1/chat/completions` endpoint as a relevance judge.

vLLM, llama.cpp's server, Ollama, OpenAI and Azure's OpenAI all take the same request: each pair
is one chat completion, `{"model", "messages": [{"role": "user", "content": <prompt>}],
"temperature", "max_tokens"}`, the prompt being the declared template (UMBRELA's by default,
`labeler.judges.prompt`) filled with the pair. The answer's `choices[0].message.content` is
parsed strictly: no grade, a grade outside 0-3, or an answer that is not a chat completion is
that pair's `JudgeFailure`, never a 0.

The transport is the one declared search systems use (`labeler.systems.http.send_with_retries`
and `transport`): at most `concurrency` requests in flight and `rate` per second; connection
errors, 429 (Retry-After honoured) and 5xx retried with backoff; every call bounded by a real
`deadline` (however slowly the answer trickles in) and its answer by `max_bytes`. Secrets come
from `${NAME}` references in the headers, resolved at call time; their values are masked as
*** in every error, raw answer and repr.
"""
from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from labeler.judges.base import JudgeFailure, JudgePair, JudgeResult, grade_of
from labeler.judges.prompt import UnparsedAnswer, parse_grade, render_prompt
from labeler.progress import Progress
from labeler.systems.base import SearchFailed
from labeler.systems.endpoint_spec import redact, resolve_env
from labeler.systems.http import DEFAULT_PORTS, RateLimiter, host_allowed, open_client, send_with_retries

_SHOWN = 120  # characters of a malformed answer quoted in a failure


@dataclass(frozen=True)
class _Limits:
    """What `send_with_retries` bounds one call by, from the judge's params."""

    timeout: float
    deadline: float
    max_bytes: int
    backoff: float
    max_retry_wait: float


def completions_url(url: str) -> str:
    """The chat-completions URL of a declared base URL (".../v1" gets "/chat/completions")."""
    url = url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


class OpenAIJudge:
    """A judge behind an OpenAI-compatible endpoint (use as a context manager, or call close())."""

    kind = "openai"

    def __init__(self, spec, *, environ: Mapping[str, str] | None = None,
                 allowed_hosts: frozenset[str] | None = None) -> None:
        import os

        self.spec = spec
        self.name = spec.name
        self.environ = os.environ if environ is None else environ
        self.allowed_hosts = allowed_hosts
        p = spec.params
        self.url = completions_url(p["url"])
        self.limits = _Limits(p["timeout"], p["deadline"], p["max_bytes"], p["backoff"], p["max_retry_wait"])
        self._limiter = RateLimiter(p.get("rate"))
        self._slots = threading.BoundedSemaphore(p["concurrency"])
        self._client = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIJudge(name={self.name!r}, model={self.spec.model!r}, url={self.spec.params['url']!r})"

    def __enter__(self) -> "OpenAIJudge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    @property
    def client(self):
        with self._lock:
            if self._client is None:
                self._client = open_client(self.spec.params["concurrency"], self.limits.timeout,
                                           self._check_host if self.allowed_hosts is not None else None)
            return self._client

    def _check_host(self, request) -> None:
        if not host_allowed(request.url.host, request.url.port or DEFAULT_PORTS.get(request.url.scheme),
                            self.allowed_hosts):
            raise SearchFailed(f"{request.url.host} is not a host this server may call", kind="host_refused",
                               hint="the server's operator lists the hosts declared judges may call.")

    def headers(self) -> dict[str, str]:
        """The headers with `${NAME}` resolved (ConfigError naming a variable that is not set)."""
        return {name: resolve_env(value, f"judge {self.name!r}: header {name!r}", self.environ)
                for name, value in self.spec.params.get("headers", {}).items()}

    def secrets(self) -> tuple[str, ...]:
        """The values the headers' and url's `${NAME}` references resolve to now (never shown)."""
        import re

        texts = [self.spec.params["url"], *self.spec.params.get("headers", {}).values()]
        names = {n for text in texts for n in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", text)}
        return tuple(sorted({self.environ[n] for n in names if self.environ.get(n)}, key=len, reverse=True))

    def request_body(self, pair: JudgePair) -> dict[str, Any]:
        """The chat-completions request for one pair."""
        prompt = render_prompt(self.spec.prompt, pair.question, pair.title, pair.text)
        return {"model": self.spec.model, "messages": [{"role": "user", "content": prompt}],
                "temperature": self.spec.params["temperature"], "max_tokens": self.spec.params["max_tokens"]}

    def judge_one(self, pair: JudgePair, *, headers: Mapping[str, str] | None = None,
                  secrets: tuple[str, ...] | None = None) -> JudgeResult:
        """Grade one pair: a MachineGrade, or a JudgeFailure saying why (secrets masked)."""
        headers = self.headers() if headers is None else headers
        secrets = self.secrets() if secrets is None else secrets
        url = resolve_env(self.url, f"judge {self.name!r}: url", self.environ)
        try:
            answer, _ = send_with_retries(self.client, "POST", url, headers, self.request_body(pair), self.limits,
                                          retries=self.spec.params["retries"], slots=self._slots,
                                          limiter=self._limiter, redacted=lambda text: redact(text, secrets))
        except SearchFailed as exc:
            return JudgeFailure(pair.query_id, pair.doc_id, redact(str(exc), secrets))
        try:
            content = answer.json()["choices"][0]["message"]["content"]
            if not isinstance(content, str):
                raise TypeError(f"content is {type(content).__name__}")
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, IndexError, TypeError) as exc:
            shown = " ".join(redact(answer.text, secrets).split())[:_SHOWN]
            return JudgeFailure(pair.query_id, pair.doc_id,
                                f"not a chat completion (no choices[0].message.content: {exc}): {shown!r}")
        content = redact(content, secrets)
        try:
            grade, rationale = parse_grade(content)
        except UnparsedAnswer as exc:
            return JudgeFailure(pair.query_id, pair.doc_id, f"unparsed answer: {exc}")
        return grade_of(self.spec, pair, grade, content, rationale)

    def judge(self, pairs: Iterable[JudgePair], progress: Progress | None = None) -> Iterator[JudgeResult]:
        """Every pair, `concurrency` at a time within `rate`; results as they finish. A missing
        `${NAME}` raises ConfigError before anything is sent."""
        pairs = list(pairs)
        headers, secrets = self.headers(), self.secrets()
        resolve_env(self.url, f"judge {self.name!r}: url", self.environ)
        if not pairs:
            return
        workers = min(self.spec.params["concurrency"], len(pairs))
        # Progress is reported from the calling thread (a UI's progress bar may only be touched there).
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"judge-{self.name}") as pool:
            futures = [pool.submit(self.judge_one, pair, headers=headers, secrets=secrets) for pair in pairs]
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    if progress:
                        progress(done, len(pairs), "judging")
                    yield future.result()
            finally:  # a caller that stops early (Ctrl-C, a closed generator) leaves no work queued
                for future in futures:
                    future.cancel()
