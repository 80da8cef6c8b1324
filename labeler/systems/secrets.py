"""Where a declaration may hold a secret, and the declaration with every such part masked.

A secret is never a literal in a declaration: it is a `${NAME}` reference, read from the
environment when a request is sent. The parts that can carry one are the URL's user:password,
a path segment that follows a key-like segment (`/token/abc`) or looks like a key itself (long,
mixed case and digits, or a known key prefix such as `sk-`), a query parameter with a key-like
name (`?sig=...`), a body field with a key-like name (`api_key`), and a sensitive header
(Authorization, Cookie, X-Api*, *-Key, *-Token...). `literal_secrets` lists the ones holding a
literal value (refused when a declaration is loaded or saved); `mask_declaration` shows any
declaration, even one stored before that rule, with them as "***".

Key-like names are split into words ("X-Api-Key" -> x, api, key; "accessToken" -> access, token)
and the last word decides, so "keywords", "max_tokens" or "key_field" are not taken for secrets.
"""
from __future__ import annotations

import copy
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import Any

from labeler.systems.base import SECRET_MASK

_SECRET_WORDS = frozenset({"key", "apikey", "token", "sig", "signature", "secret", "password", "passwd", "pwd",
                           "auth", "authorization", "credential", "credentials", "cookie", "session", "jwt",
                           "bearer"})
_SECRET_ENDINGS = ("key", "token", "secret", "password")  # apikey, accesstoken, clientsecret
_KEY_PREFIXES = ("sk-", "sk_", "pk_", "rk_", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "akia", "aiza", "glpat-")
_PATH_KEYS = frozenset({"key", "keys", "apikey", "api-key", "api_key", "token", "tokens", "secret", "sig", "signature"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_ONLY_PLACEHOLDERS = re.compile(r"(?:\{(?:query|k)\})+")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name)]


def is_secret_name(name: str) -> bool:
    """Whether a field, parameter or header named `name` is taken to hold a secret: its last word
    says so (api_key, X-Search-Token, client_secret, sig; not key_field or token_count)."""
    words = _words(name)
    return bool(words) and (words[-1] in _SECRET_WORDS or words[-1].endswith(_SECRET_ENDINGS))


def is_secret_header(name: str) -> bool:
    """Whether a header may carry a secret: key-like words, or any X-Api* header."""
    return is_secret_name(name) or _words(name)[:2] == ["x", "api"]


def _literal(value: Any) -> bool:
    """A string that is a value, not a `${NAME}` reference or only {query}/{k} placeholders."""
    return (isinstance(value, str) and bool(value.strip()) and "${" not in value
            and not _ONLY_PLACEHOLDERS.fullmatch(value.strip()))


def _looks_like_key(segment: str) -> bool:
    if segment.lower().startswith(_KEY_PREFIXES) and len(segment) >= 12:
        return True
    return (len(segment) >= 20 and "." not in segment and any(c.isdigit() for c in segment)
            and any(c.isupper() for c in segment) and any(c.islower() for c in segment))


def _url_parts(url: str) -> Iterator[tuple[str, str, str]]:
    """(kind, where, literal value) for each secret-bearing part of `url` holding a literal."""
    parts = urllib.parse.urlsplit(url)
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        user, colon, password = userinfo.partition(":")
        if _literal(password if colon else user):  # user:password, or a token alone in the user's place
            yield "userinfo", "url user:password", userinfo
    segments = parts.path.split("/")
    for i, segment in enumerate(segments):
        name, equals, value = segment.partition("=")
        if equals and is_secret_name(name) and _literal(value):
            yield "path", f"url path segment {name}=", segment
        elif _literal(segment) and ((i and segments[i - 1].lower() in _PATH_KEYS) or _looks_like_key(segment)):
            yield "path", f"url path segment {i}", segment
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if is_secret_name(name) and _literal(value):
            yield "query", f"url parameter {name}", value


def _body_fields(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted name, value) of every key-like body field holding a literal."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            dotted = f"{path}.{key}" if path else str(key)
            if is_secret_name(str(key)) and _literal(item):
                yield dotted, item
            else:
                yield from _body_fields(item, dotted)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _body_fields(item, f"{path}[{i}]")


def literal_secrets(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(where, value) of every literal secret in a declaration dict (validated or not)."""
    found = [(where, value) for _, where, value in _url_parts(str(data.get("url") or ""))]
    headers = data.get("headers")
    if isinstance(headers, Mapping):
        found += [(f"header {name}", v) for name, v in headers.items() if is_secret_header(str(name)) and _literal(v)]
    found += [(f"body field {name}", v) for name, v in _body_fields(data.get("body"))]
    return found


def mask_secret(name: str, value: str) -> str:
    """A header value as shown: "***" for a literal in a sensitive header, else unchanged."""
    return SECRET_MASK if is_secret_header(name) and _literal(value) else value


def mask_url(url: str) -> str:
    """`url` with a literal user:password, key-like path segment or key-like parameter as "***"."""
    found = list(_url_parts(url))
    if not found:
        return url
    parts = urllib.parse.urlsplit(url)
    netloc, path, query = parts.netloc, parts.path, parts.query
    if any(kind == "userinfo" for kind, _, _ in found):
        netloc = f"{SECRET_MASK}@{netloc.rsplit('@', 1)[1]}"
    secret_segments = {value for kind, _, value in found if kind == "path"}
    path = "/".join(SECRET_MASK if s in secret_segments else s for s in path.split("/"))
    if any(kind == "query" for kind, _, _ in found):
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        query = "&".join(f"{k}={SECRET_MASK if is_secret_name(k) and _literal(v) else v}" for k, v in pairs)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, path=path, query=query))


def _mask_body(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: SECRET_MASK if is_secret_name(str(k)) and _literal(v) else _mask_body(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_body(v) for v in value]
    return value


def mask_declaration(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a declaration dict with every literal secret shown as "***" (`${NAME}` as written)."""
    out = copy.deepcopy(dict(data))
    if isinstance(out.get("url"), str):
        out["url"] = mask_url(out["url"])
    if isinstance(out.get("headers"), Mapping):
        out["headers"] = {k: mask_secret(str(k), v) if isinstance(v, str) else v for k, v in out["headers"].items()}
    if out.get("body") is not None:
        out["body"] = _mask_body(out["body"])
    return out
