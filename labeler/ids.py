"""One id policy for query ids and document ids, applied by the corpus loaders, the golden-set
readers and the store alike.

An id is a non-empty string of valid UTF-8 (no lone surrogates) with no whitespace of any kind
(ASCII or Unicode: tabs, newlines, U+00A0, U+2028, ...) and no control character, and it does
not start with `#`. Every file format the labeler writes separates fields with whitespace
(TREC qrels and runs) or tabs (BEIR qrels), and trec_eval reads a qrels line starting with `#`
as a comment: an id outside this policy would be silently mangled or dropped on export.

A folder corpus gets its ids from file names, which may hold spaces; `path_to_doc_id` makes
them satisfy the policy reversibly by percent-encoding (`%` itself becomes `%25`).
"""
from __future__ import annotations

import json
import unicodedata
from typing import Any

ID_HINT = "ids must be non-empty, hold no spaces, tabs or control characters, and not start with '#'."


# Names from JSON, where most ids come from: "got integer 7", not "got int".
_JSON_KINDS = {bool: "boolean", int: "integer", float: "number", list: "array", dict: "object", type(None): "null"}


def _bad_char(c: str) -> bool:
    return c.isspace() or unicodedata.category(c) in ("Cc", "Zs", "Zl", "Zp")


def id_problem(value: Any, what: str = "id") -> str | None:
    """Why `value` is not a valid id, or None if it is one (`what` names it: "doc id", ...)."""
    if not isinstance(value, str):
        kind = _JSON_KINDS.get(type(value), type(value).__name__)
        if value is None:
            return f"{what} must be a string, got null"
        try:
            shown = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            shown = repr(value)
        return f"{what} must be a string, got {kind} {shown if len(shown) <= 40 else shown[:37] + '...'}"
    if not value:
        return f"{what} is empty"
    # Fast path for the common id: printable ASCII (0x20-0x7E) without a space or a leading '#'.
    if value.isascii() and value.isprintable() and " " not in value and value[0] != "#":
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return f"{what} {value!r} is not valid UTF-8 (it holds a lone surrogate)"
    bad = next((c for c in value if _bad_char(c)), None)
    if bad is not None:
        kind = "whitespace" if bad.isspace() or unicodedata.category(bad).startswith("Z") else "a control character"
        return f"{what} {value!r} contains {kind} (U+{ord(bad):04X})"
    if value.startswith("#"):
        return f"{what} {value!r} starts with '#', which trec_eval reads as a comment"
    return None


def is_valid_id(value: Any) -> bool:
    """True when `value` satisfies the id policy."""
    return id_problem(value) is None


def path_to_doc_id(relative_path: str) -> str:
    """A folder corpus's doc id for a file: its relative path (with `/`), percent-encoding `%`,
    whitespace, control characters and a leading `#` (`notes/team plan.md` -> `notes/team%20plan.md`)."""
    out = []
    for i, c in enumerate(relative_path):
        if c == "%" or _bad_char(c) or (i == 0 and c == "#"):
            out.append("".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")))
        else:
            out.append(c)
    return "".join(out)
