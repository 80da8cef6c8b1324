"""An HTTP search endpoint declared as data: parse and validate, build a request, map a response.

Pure functions only (no network): `EndpointSpec.from_dict` validates, `render_request` fills the
templates, `map_response` turns a decoded JSON answer into ranked (doc_id, score) pairs. The
transport (retries, rate limit, concurrency) is `labeler.systems.http`.

A declaration (TOML shown; JSON and a dict hold the same keys):

    name = "acme-search"                # in a file, optional: the file's name (acme-search.toml)
    method = "POST"                     # GET or POST (default: POST with a body, else GET)
    url = "https://search.acme.test/v1/query?top={k}"     # {query}, {k} URL-encoded
    timeout = 10                        # seconds any one connect or read may wait
    deadline = 10                       # seconds per call in total, however the answer trickles in
                                        # (default: 10, or the timeout when that is longer)
    max_bytes = 10_000_000              # an answer past this many bytes is refused unread
    retries = 3                         # on connection errors, 429 and 5xx (Retry-After honoured)
    backoff = 0.5                       # first retry wait in seconds, doubled each retry
    max_retry_wait = 30                 # cap on any one wait, Retry-After included
    rate_limit = 20                     # requests per second (optional)
    concurrency = 4                     # requests in flight at most
    id_regex = '^(?P<doc>.+)#\\d+$'     # optional: chunk id -> doc id (group "doc", else group 1)

    [headers]
    Authorization = "Bearer ${SEARCH_TOKEN}"   # ${NAME}: read from the environment at call time

    [body]                              # JSON; a string "{k}" alone becomes the number k
    query = "{query}"
    top_k = "{k}"

    [response]                          # JMESPath expressions
    hits = "results"                    # the list of hits in the response
    id = "document.id"                  # per hit: its id
    score = "score"                     # per hit: its score (optional: rank order then decides)
"""
from __future__ import annotations

import copy
import json
import math
import os
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from labeler.errors import ConfigError
from labeler.systems.base import SECRET_MASK, SearchFailed, check_doc_id, check_score
from labeler.systems.secrets import literal_secrets, mask_declaration

_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_REF = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEYS = ("kind", "name", "method", "url", "headers", "body", "response", "id_regex", "timeout", "deadline",
        "max_bytes", "retries", "backoff", "max_retry_wait", "rate_limit", "concurrency")
RESPONSE_KEYS = ("hits", "id", "score")
MIN_SECRET = 4  # shorter values are not masked: "1" would turn "HTTP 401" into "HTTP 40***"
_CUT_MESSAGE = 2000  # texts past this are answers, not messages that cut a value short with "..."


@dataclass(frozen=True)
class EndpointSpec:
    """A validated endpoint declaration (env references unresolved: no secret is ever held here)."""

    name: str
    url: str
    response: Mapping[str, str]
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    id_regex: str | None = None
    timeout: float = 10.0
    deadline: float = 10.0
    max_bytes: int = 10_000_000
    retries: int = 3
    backoff: float = 0.5
    max_retry_wait: float = 30.0
    rate_limit: float | None = None
    concurrency: int = 4

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> "EndpointSpec":
        """Validate a declaration; a bad field raises ConfigError naming it and how to fix it."""
        def fail(message: str, hint: str) -> ConfigError:
            return ConfigError(f"endpoint {data.get('name', '?')!r}: {message}", path=source, hint=hint)

        if not isinstance(data, Mapping):
            raise ConfigError("an endpoint declaration must be a table/object of keys", path=source,
                              hint="see `labeler.systems.endpoint_spec` for an example.")
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            raise fail(f"unknown key(s) {', '.join(unknown)}", f"valid keys: {', '.join(KEYS)}.")
        if data.get("kind", "http") != "http":
            raise fail(f"kind must be \"http\", got {data.get('kind')!r}", 'set kind = "http" or leave it out.')
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise fail("name is missing or empty", 'add name = "my-search" (how runs and pages show it).')
        url = data.get("url")
        if url is None:
            raise fail("url is missing", 'add url = "http://127.0.0.1:8000/search" (where each question is sent).')
        if not isinstance(url, str) or not re.match(r"https?://[^/\s]", url):
            raise fail(f"url must start with http:// or https://, got {url!r}",
                       'e.g. url = "http://127.0.0.1:8000/search".')
        body = data.get("body")
        method = data.get("method", "POST" if body is not None else "GET")
        if not isinstance(method, str) or method.upper() not in ("GET", "POST"):
            raise fail(f"method must be GET or POST, got {method!r}", 'set method = "GET" or method = "POST".')
        method = method.upper()
        if method == "GET" and body is not None:
            raise fail("a GET request has no body", 'set method = "POST", or move {query} into the url.')
        if body is not None and not isinstance(body, (dict, list)):
            raise fail("body must be a JSON object or array", 'e.g. [body] query = "{query}" k = "{k}".')
        headers = data.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                       for k, v in headers.items()):
            raise fail("headers must map header names to strings",
                       'e.g. [headers] Authorization = "Bearer ${SEARCH_TOKEN}".')
        if found := literal_secrets({"url": url, "headers": headers, "body": body}):
            wheres = ", ".join(where for where, _ in found)
            raise fail(f"a secret is written in plain text ({wheres})",
                       "put it in an environment variable and write ${NAME} there, e.g. "
                       'Authorization = "Bearer ${SEARCH_TOKEN}" or api_key = "${SEARCH_KEY}" '
                       "(read when a request is sent, never stored or shown).")
        for where, text in [("url", url), *((f"header {k!r}", v) for k, v in headers.items()),
                            *(("body", v) for v in strings_in(body))]:
            for ref in _ENV_REF.findall(text):
                if not _ENV_NAME.fullmatch(ref):
                    raise fail(f"{where} references ${{{ref}}}, not an environment variable name",
                               "write ${NAME} with letters, digits and underscores.")
        placeholders = [("url", p) for p in _PLACEHOLDER.findall(url)]
        placeholders += [("body", p) for s in strings_in(body) for p in _PLACEHOLDER.findall(s)]
        for where, p in placeholders:
            if p not in ("query", "k"):
                raise fail(f"{where} has an unknown placeholder {{{p}}}", "use {query} (the question) and {k}.")
        if ("url", "query") not in placeholders and ("body", "query") not in placeholders:
            raise fail("neither url nor body contains {query}, so the question is never sent",
                       'put {query} in the url (?q={query}) or the body (query = "{query}").')
        response = data.get("response")
        if not isinstance(response, Mapping):
            raise fail("response mapping is missing", '[response] hits = "results" id = "id" score = "score".')
        bad = sorted(set(response) - set(RESPONSE_KEYS))
        if bad:
            raise fail(f"unknown response key(s) {', '.join(bad)}", "response takes hits, id and score.")
        for key in RESPONSE_KEYS:
            expression = response.get(key)
            if expression is None and key == "score":
                continue
            if not isinstance(expression, str) or not expression.strip():
                raise fail(f"response.{key} is missing", f'give a JMESPath expression, e.g. {key} = "{key}".')
            _compile(expression, f"response.{key}", fail)
        id_regex = data.get("id_regex")
        if id_regex is not None:
            try:
                compiled = re.compile(id_regex)
            except (re.error, TypeError) as exc:
                raise fail(f"id_regex {id_regex!r} is not a regular expression ({exc})",
                           "e.g. id_regex = '^(?P<doc>.+)#\\d+$'.") from None
            if compiled.groups > 1 and "doc" not in compiled.groupindex:
                raise fail("id_regex has several groups and none is named doc",
                           "name the doc id group (?P<doc>...), or use one group.")
        numbers = {key: _number(data, key, default, kind, positive, fail)
                   for key, default, kind, positive in _NUMBERS}
        if numbers["deadline"] is None:  # a declared longer timeout is not cut short by the default
            numbers["deadline"] = max(DEFAULT_DEADLINE, numbers["timeout"])
        return cls(name=name.strip(), url=url, response=dict(response), method=method, headers=dict(headers),
                   body=copy.deepcopy(body), id_regex=id_regex, **numbers)

    def to_dict(self) -> dict[str, Any]:
        """The declaration as written (env references unresolved; literal header values kept)."""
        out: dict[str, Any] = {"kind": "http", "name": self.name, "method": self.method, "url": self.url}
        if self.headers:
            out["headers"] = dict(self.headers)
        if self.body is not None:
            out["body"] = copy.deepcopy(self.body)
        out["response"] = dict(self.response)
        if self.id_regex is not None:
            out["id_regex"] = self.id_regex
        out.update(timeout=self.timeout, deadline=self.deadline, max_bytes=self.max_bytes, retries=self.retries,
                   backoff=self.backoff, max_retry_wait=self.max_retry_wait, concurrency=self.concurrency)
        if self.rate_limit is not None:
            out["rate_limit"] = self.rate_limit
        return out

    def describe(self) -> dict[str, Any]:
        """`to_dict` with every literal secret masked as "***" (user:password, key-like path segments,
        parameters and body fields, sensitive headers); `${NAME}` references shown as written."""
        return mask_declaration(self.to_dict())

    def literal_secrets(self) -> list[str]:
        """Where the declaration holds a literal (not `${NAME}`) secret (none once loaded: refused)."""
        return [where for where, _ in literal_secrets(self.to_dict())]


DEFAULT_DEADLINE = 10.0
_NUMBERS = (("timeout", 10.0, float, True), ("deadline", None, float, True), ("max_bytes", 10_000_000, int, True),
            ("retries", 3, int, False), ("backoff", 0.5, float, False),
            ("max_retry_wait", 30.0, float, True), ("rate_limit", None, float, True), ("concurrency", 4, int, True))


def _number(data: Mapping[str, Any], key: str, default: Any, kind: type, positive: bool, fail) -> Any:
    value = data.get(key, default)
    if value is None and default is None:
        return None
    ok_type = isinstance(value, (int, float)) if kind is float else isinstance(value, int)
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or (value <= 0 if positive else value < 0):
        rule = ("a positive " if positive else "a ") + ("whole number" if kind is int else "number") \
            + ("" if positive else " >= 0")
        raise fail(f"{key} must be {rule}, got {value!r}", f"e.g. {key} = {default if default is not None else 10}.")
    return kind(value)


def _compile(expression: str, where: str, fail):
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise fail(f"{where} {expression!r} is not a JMESPath expression ({detail})",
                   "see https://jmespath.org; e.g. results[*] or data.hits.") from None


def strings_in(value: Any):
    """Every string in a JSON-like value (a body template), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def resolve_env(text: str, where: str, environ: Mapping[str, str] | None = None, *, source: str | None = None) -> str:
    """`${NAME}` references replaced from the environment; a missing variable raises ConfigError
    naming `where` in the declaration and its `source` (the file, or "saved system 'x'")."""
    environ = os.environ if environ is None else environ

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in environ:
            raise ConfigError(f"{where} references ${{{name}}}, but the environment variable {name} is not set",
                              path=source, hint=f"export {name}=... before running (the secret is never stored).")
        return environ[name]

    return _ENV_REF.sub(value, text)


def secret_values(spec: EndpointSpec, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """What must never be shown: the values the url's, headers' and body's `${NAME}` references
    resolve to now, and any literal secret (the parts `describe` masks)."""
    environ = os.environ if environ is None else environ
    texts = (spec.url, *spec.headers.values(), *strings_in(spec.body))
    names = {name for text in texts for name in _ENV_REF.findall(text)}
    values = {environ[name] for name in names if environ.get(name)}
    values |= {v for _, v in literal_secrets(spec.to_dict())}
    return tuple(sorted(values, key=len, reverse=True))


def _secret_forms(secrets: Iterable[str]) -> list[str]:
    """How the secrets may come back, longest first: as sent, JSON-escaped, repr'd, URL-encoded
    (strictly, as httpx does, or with + for spaces)."""
    forms = set()
    for secret in secrets:
        if len(secret) >= MIN_SECRET:
            forms |= {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
                      repr(secret)[1:-1], urllib.parse.quote(secret, safe=""),
                      urllib.parse.quote(secret, safe="/:@!$&'()*+,;="), urllib.parse.quote_plus(secret)}
    return sorted((form for form in forms if len(form) >= MIN_SECRET), key=len, reverse=True)


def _mask(text: str, forms: list[str]) -> str:
    for form in forms:
        text = text.replace(form, SECRET_MASK)
    if "..." not in text or len(text) > _CUT_MESSAGE:
        return text
    # A message that cut a value short ("got object {...") may have cut a secret too: mask its start.
    pieces = text.split("...")
    for i, head in enumerate(pieces[:-1]):
        n = max((n for form in forms for n in range(MIN_SECRET, len(form)) if head.endswith(form[:n])), default=0)
        if n:
            pieces[i] = head[:-n] + SECRET_MASK
    return "...".join(pieces)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every form of every secret replaced by "***" (an endpoint may echo its
    Authorization header in an error answer, and messages quote answers). Mask before cutting a
    text short: a cut after masking cannot leave a secret's start behind."""
    return _mask(text, _secret_forms(secrets))


def redact_json(value: Any, secrets: Iterable[str]) -> Any:
    """A decoded JSON answer with `redact` applied to every string in it, keys included (a copy)."""
    forms = _secret_forms(secrets)

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _mask(item, forms)
        if isinstance(item, dict):
            return {_mask(k, forms): walk(v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v) for v in item]
        return item

    return walk(value)


def _fill_body(value: Any, question: str, k: int, env) -> Any:
    """The body template filled: {query}, {k}, and `${NAME}` through `env` (before the question
    goes in, so a question holding "${X}" is sent as typed)."""
    if isinstance(value, str):
        if value == "{k}":
            return k
        if value == "{query}":
            return question
        return _PLACEHOLDER.sub(lambda m: question if m.group(1) == "query" else str(k), env(value))
    if isinstance(value, dict):
        return {key: _fill_body(v, question, k, env) for key, v in value.items()}
    if isinstance(value, list):
        return [_fill_body(v, question, k, env) for v in value]
    return value


def render_request(spec: EndpointSpec, question: str, k: int, *, environ: Mapping[str, str] | None = None,
                   source: str | None = None) -> tuple[str, str, dict[str, str], Any]:
    """(method, url, headers, json body or None) for one question: templates filled, env resolved
    (`source`: where the declaration came from, named when a variable is missing)."""
    where = f"endpoint {spec.name!r}: "
    url = resolve_env(spec.url, where + "url", environ, source=source)
    url = _PLACEHOLDER.sub(lambda m: urllib.parse.quote(question, safe="") if m.group(1) == "query" else str(k), url)
    headers = {name: resolve_env(v, f"{where}header {name!r}", environ, source=source)
               for name, v in spec.headers.items()}
    body = (_fill_body(spec.body, question, k, lambda text: resolve_env(text, where + "body", environ, source=source))
            if spec.body is not None else None)
    return spec.method, url, headers, body


@dataclass(frozen=True)
class ResponseMapping:
    """The compiled JMESPath expressions and id regex of a spec."""

    hits: Any
    id: Any
    score: Any
    id_regex: re.Pattern | None
    expressions: Mapping[str, str]

    @classmethod
    def of(cls, spec: EndpointSpec) -> "ResponseMapping":
        """Compile once per system (the spec is already validated)."""
        def fail(message: str, hint: str) -> ConfigError:
            return ConfigError(message, hint=hint)

        r = spec.response
        return cls(_compile(r["hits"], "response.hits", fail), _compile(r["id"], "response.id", fail),
                   _compile(r["score"], "response.score", fail) if r.get("score") else None,
                   re.compile(spec.id_regex) if spec.id_regex else None, dict(r))


def map_response(mapping: ResponseMapping, data: Any) -> list[tuple[str, float]]:
    """A decoded JSON answer -> (doc_id, score) pairs in the endpoint's order; SearchFailed(kind="mapping")."""
    hits = mapping.hits.search(data)
    where = f"response.hits {mapping.expressions['hits']!r}"
    if hits is None:
        raise SearchFailed(f"{where} matched nothing in the response", kind="mapping",
                           hint="check the expression against a raw response (test query).")
    if not isinstance(hits, list):
        raise SearchFailed(f"{where} gave a {type(hits).__name__}, not a list of hits", kind="mapping",
                           hint="point the expression at the list, e.g. results or data.hits.")
    pairs = []
    for i, hit in enumerate(hits):
        raw_id = mapping.id.search(hit)
        if raw_id is None:
            raise SearchFailed(f"hit {i}: response.id {mapping.expressions['id']!r} found no value", kind="mapping",
                               hint="check the expression against a raw response (test query).")
        doc_id = check_doc_id(raw_id, f"hit {i}")
        if mapping.id_regex is not None:
            match = mapping.id_regex.search(doc_id)
            if match is None:
                raise SearchFailed(f"hit {i}: id {doc_id!r} does not match id_regex {mapping.id_regex.pattern!r}",
                                   kind="mapping", hint="widen id_regex, or leave it out if ids are doc ids.")
            group = "doc" if "doc" in mapping.id_regex.groupindex else (1 if mapping.id_regex.groups else 0)
            doc_id = check_doc_id(match.group(group), f"hit {i} (after id_regex)")
        if mapping.score is None:
            score = float(len(hits) - i)  # no score: the endpoint's order is the ranking
        else:
            raw_score = mapping.score.search(hit)
            if raw_score is None:
                raise SearchFailed(f"hit {i}: response.score {mapping.expressions['score']!r} found no value",
                                   kind="mapping", hint="check the expression, or leave score out to rank by order.")
            score = check_score(raw_score, f"hit {i}")
        pairs.append((doc_id, score))
    return pairs
