"""What `labeler serve` accepts: a search request's query and k, from a JSON body or a URL's query
string, each refused (`BadRequest`: status and one line) before it could crash the parser or the model."""
from __future__ import annotations

import json
import re
import sys
import urllib.parse
from typing import Any

MAX_K = 1000
MAX_BODY = 64 * 1024
_BODY_KEYS = ("query", "k")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SHOWN_VALUE = 40  # characters of a bad value quoted back in an error


class BadRequest(Exception):
    """A request the client must fix: its HTTP status and one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _shown(value: Any) -> str:
    """A client's value as quoted in an error: its repr, cut short (a k may be thousands of digits)."""
    text = repr(value)
    return text if len(text) <= _SHOWN_VALUE else text[:_SHOWN_VALUE - 3] + "..."


def whole_number(text: str, max_digits: int = 18) -> int | None:
    """`text` as an int when it is ASCII digits (spaces around allowed), else None.

    str.isdigit() alone is not enough: "\u00b2" (superscript two) passes it and int() then raises.
    """
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > max_digits:
        return None
    return int(text)


def parse_k(value: Any, default: int) -> int:
    """The request's k: a whole number in 1..MAX_K (default when absent); BadRequest otherwise."""
    if value is None:
        return default
    if isinstance(value, str) and (number := whole_number(value)) is not None:
        value = number
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise BadRequest(400, f"k must be a whole number from 1 to {MAX_K}, got {_shown(value)}")
    return value


def parse_query(value: Any) -> str:
    """The request's question: a non-empty string of real characters; BadRequest otherwise.

    JSON lets a string hold a lone "\\ud800" escape; Python keeps it as an unpaired surrogate,
    which is not text (it cannot be encoded as UTF-8) and the tokenizer raises TypeError on it.
    """
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(400, 'the request needs a non-empty "query" string (GET: ?q=...)')
    if match := _SURROGATE.search(value):
        raise BadRequest(400, f'the "query" holds an unpaired UTF-16 surrogate ({_shown(match.group())[1:-1]} at '
                              f"character {match.start()}), which is not text; send the question as valid Unicode")
    return value


def parse_search_url(query_string: str, default_k: int) -> tuple[str, int]:
    """(query, k) from a GET /search query string; BadRequest for anything malformed."""
    try:  # strict: "%ED%A0%80" (an encoded surrogate) must not become three replacement characters
        params = urllib.parse.parse_qs(query_string, keep_blank_values=True, errors="strict")
    except UnicodeDecodeError as exc:
        raise BadRequest(400, f"the query string is not UTF-8 once percent-decoded ({exc.reason} at byte "
                              f"{exc.start}); percent-encode the question's UTF-8 bytes") from None
    query = parse_query((params.get("q") or params.get("query") or [None])[0])
    return query, parse_k((params.get("k") or [None])[0], default_k)


def parse_body(raw: bytes, default_k: int) -> tuple[str, int]:
    """(query, k) from a POST /search body; BadRequest for anything malformed."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(400, f"the body is not JSON: {exc}") from None
    except RecursionError:  # 64 KiB of "[" is valid-looking JSON deeper than the parser's stack
        raise BadRequest(400, "the body nests arrays or objects too deeply; send a flat "
                              '{"query": "...", "k": 10}') from None
    except ValueError:  # an integer past Python's digit limit (int_max_str_digits)
        raise BadRequest(400, f"the body holds a number too long to read (over {sys.get_int_max_str_digits():,} "
                              "digits); k is a whole number from 1 to 1000") from None
    if not isinstance(data, dict):
        raise BadRequest(400, 'the body must be a JSON object like {"query": "...", "k": 10}')
    unknown = sorted(set(data) - set(_BODY_KEYS))
    if unknown:
        shown = ", ".join(map(_shown, unknown[:5])) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise BadRequest(400, f"unknown key(s) {shown}; the body takes \"query\" and \"k\"")
    return parse_query(data.get("query")), parse_k(data.get("k"), default_k)
