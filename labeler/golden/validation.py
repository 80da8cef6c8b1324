"""Checking golden-set input: grades, ids, one golden JSONL object, and the bad-line collector.

Ids follow the one policy of `labeler.ids`. Grades are integers 0-3 unless the caller keeps the
file's own scale; even then a grade must fit in 64 bits, since the database stores 64-bit integers.
"""
from __future__ import annotations

import json
import math
from collections.abc import Collection
from datetime import datetime
from typing import Any

from labeler.errors import GoldenFormatError, LineProblem
from labeler.golden.model import GRADE_MAX, GRADE_MIN, KNOWN_FIELDS, GoldenQuery
from labeler.ids import ID_HINT, id_problem
from labeler.jsonlines import HINT_ENCODING, BadLine

MAX_PROBLEMS = 1000
# A question is what a user types into a search box, not a document: 4,000 characters is twice the
# longest query of SciFact (204), Cranfield (266) and CISI (2,023), and keeps every card's
# highlighting of its terms cheap (a 5 MB question made each keyboard step take 4 s).
MAX_QUESTION_CHARS = 4_000
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# Optional v1 fields (DESIGN.md "Second stage") keyed by doc id; their keys follow the id policy.
DOC_ID_MAPS = ("doc_hashes", "adjudicated")
ANNOTATOR_DOC_ID_MAPS = ("annotations",)  # annotator -> {doc id: grade}

HINT_GENERIC = (
    "fix the listed lines and try again; nothing from the file was used. Each line is one JSON object "
    'like {"query_id": "q-1", "question": "...", "relevance": {"doc-7": 2}}.'
)
HINT_SCALE = (
    "grades are 0 (not relevant) to 3 (answers fully): correct a mistyped grade. A file on its own scale "
    "(e.g. Cranfield's -1 and 1-4) is read as it is with --keep-scale (in Python: keep_scale=True)."
)
HINT_INT64 = "a grade must fit in 64 bits (-2**63 to 2**63-1): the database stores 64-bit integers."
HINT_CORPUS = "check the doc ids against the corpus, or import against the corpus they came from."
HINT_EMPTY = "the file must hold at least one question, one JSON object per line."
HINT_IDS = ID_HINT
HINT_QUESTION = "shorten the question to what a user would type (a question is not a document)."
_HINT_ORDER = (HINT_EMPTY, HINT_ENCODING, HINT_INT64, HINT_SCALE, HINT_CORPUS, HINT_IDS, HINT_QUESTION)


def question_problem(text: str) -> str | None:
    """Why a question's text cannot be kept (longer than MAX_QUESTION_CHARS), or None: the one
    cap that adding, editing and importing a question share."""
    if len(text) > MAX_QUESTION_CHARS:
        return f"the question is {len(text):,} characters long; the limit is {MAX_QUESTION_CHARS:,}"
    return None


def grade_problem(value: Any, doc_id: str, keep_scale: bool) -> tuple[int | None, str | None, str]:
    """(grade, reason, hint) for one relevance value; reason is None when the grade is fine."""
    if isinstance(value, bool):
        return None, f"grade for {doc_id!r} is {json.dumps(value)}; a grade is an integer 0-3, not a boolean", ""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        return None, f"grade for {doc_id!r} must be an integer 0-3, got {describe(value)}", ""
    if not INT64_MIN <= value <= INT64_MAX:
        return None, f"grade {value} for {doc_id!r} does not fit in 64 bits", HINT_INT64
    if not keep_scale and not GRADE_MIN <= value <= GRADE_MAX:
        return None, f"grade {value} for {doc_id!r} is outside 0-3", HINT_SCALE
    return value, None, ""


def describe(value: Any) -> str:
    """A short description of a JSON value for a message: `integer 7`, `string "2"`, `null`."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object", type(None): "null"}.get(type(value), type(value).__name__)
    return "null" if kind == "null" else f"{kind} {text}"


def iso_problem(value: Any, name: str) -> str | None:
    """Why `value` is not an ISO 8601 time string or null, or None."""
    if value is None:
        return None
    if not isinstance(value, str):
        return f"'{name}' must be an ISO 8601 time string or null, got {describe(value)}"
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return f"'{name}' {value!r} is not an ISO 8601 time (e.g. 2026-11-29T10:00:00Z)"
    return None


def doc_id_map_problems(obj: dict[str, Any]) -> list[str]:
    """Reasons the doc-id keys of the optional per-document maps (doc_hashes, ...) break the id policy."""
    reasons = []
    for name in DOC_ID_MAPS:
        value = obj.get(name)
        if isinstance(value, dict):
            reasons += [why for key in value if (why := id_problem(key, f"doc id in '{name}'"))]
    for name in ANNOTATOR_DOC_ID_MAPS:
        value = obj.get(name)
        if isinstance(value, dict):
            for per_doc in value.values():
                if isinstance(per_doc, dict):
                    reasons += [why for key in per_doc if (why := id_problem(key, f"doc id in '{name}'"))]
    return reasons


class Problems:
    """Bad lines collected while parsing, with the hints that apply; raises them all at once."""

    def __init__(self) -> None:
        self.items: list[LineProblem] = []
        self.hints: set[str] = set()
        self.truncated = False

    def add(self, line: int, reason: str, hint: str = "") -> None:
        """Record one bad line (past MAX_PROBLEMS only the fact that there were more)."""
        if hint:
            self.hints.add(hint)
        if len(self.items) >= MAX_PROBLEMS:
            self.truncated = True
            return
        self.items.append(LineProblem(line, reason))

    def add_bad_line(self, line: int, bad: BadLine) -> None:
        """Record a line the JSON-lines reader could not read."""
        self.add(line, bad.reason, HINT_ENCODING if bad.kind == "encoding" else "")

    def raise_if_any(self, source: str | None) -> None:
        """Raise one GoldenFormatError listing every bad line, with the most useful hint."""
        if not self.items:
            return
        items = list(self.items)
        if self.truncated:
            items.append(LineProblem(items[-1].line, f"stopped after {MAX_PROBLEMS} bad lines"))
        hint = next((h for h in _HINT_ORDER if h in self.hints), HINT_GENERIC)
        raise GoldenFormatError(source, items, hint=hint)


def query_from_object(obj: Any, keep_scale: bool, doc_ids: Collection[str] | None,
                      ) -> tuple[GoldenQuery | None, list[str], set[str]]:
    """(query, reasons, hints) for one decoded golden JSONL line; the query is None when reasons exist."""
    reasons: list[str] = []
    hints: set[str] = set()
    if not isinstance(obj, dict):
        return None, [f"expected a JSON object, got {describe(obj)}"], hints

    for name in ("query_id", "question"):
        if name not in obj:
            reasons.append(f"missing '{name}'")
    query_id = obj.get("query_id")
    if "query_id" in obj and (why := id_problem(query_id, "'query_id'")):
        reasons.append(why)
        hints.add(HINT_IDS)
    question = obj.get("question")
    if "question" in obj:
        if not isinstance(question, str):
            reasons.append(f"'question' must be a string, got {describe(question)}")
        elif not question.strip():
            reasons.append("'question' is empty")
        elif why := question_problem(question):
            reasons.append(why)
            hints.add(HINT_QUESTION)

    def text_field(name: str) -> str:
        value = obj.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            reasons.append(f"'{name}' must be a string, got {describe(value)}")
            return ""
        return value

    query_type = text_field("query_type")
    notes = text_field("notes")

    unanswerable = obj.get("unanswerable")
    if unanswerable is None:
        unanswerable = False
    elif not isinstance(unanswerable, bool):
        reasons.append(f"'unanswerable' must be true or false, got {describe(unanswerable)}")
        unanswerable = False

    relevance: dict[str, int] = {}
    raw_relevance = obj.get("relevance")
    if raw_relevance is None:
        raw_relevance = {}
    if not isinstance(raw_relevance, dict):
        reasons.append(f"'relevance' must be an object of doc id -> grade, got {describe(raw_relevance)}")
        raw_relevance = {}
    for doc_id, value in raw_relevance.items():
        if why := id_problem(doc_id, "doc id"):
            reasons.append(why)
            hints.add(HINT_IDS)
            continue
        grade, why, hint = grade_problem(value, doc_id, keep_scale)
        if why:
            reasons.append(why)
            if hint:
                hints.add(hint)
            continue
        relevance[doc_id] = grade  # type: ignore[assignment]
    if map_reasons := doc_id_map_problems(obj):
        reasons += map_reasons
        hints.add(HINT_IDS)

    annotators = obj.get("annotators")
    if annotators is None:
        annotators = []
    if not isinstance(annotators, list) or not all(isinstance(a, str) and a.strip() for a in annotators):
        reasons.append(f"'annotators' must be a list of names, got {describe(annotators)}")
        annotators = []

    for name in ("created_at", "updated_at"):
        if why := iso_problem(obj.get(name), name):
            reasons.append(why)
    fingerprint = obj.get("corpus_fingerprint")
    if fingerprint is not None and not isinstance(fingerprint, str):
        reasons.append(f"'corpus_fingerprint' must be a string or null, got {describe(fingerprint)}")

    if unanswerable is True:
        relevant = [f"{d}={g}" for d, g in relevance.items() if g >= 1]
        if relevant:
            reasons.append("marked unanswerable but grades documents relevant (" + ", ".join(relevant[:3])
                           + (f", and {len(relevant) - 3} more" if len(relevant) > 3 else "") + ")")
    if doc_ids is not None:
        unknown = [d for d in relevance if d not in doc_ids]
        if unknown:
            hints.add(HINT_CORPUS)
            shown = ", ".join(repr(d) for d in unknown[:3])
            more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
            reasons.append(f"doc id{'s' if len(unknown) > 1 else ''} {shown}{more} not in the corpus")

    if reasons:
        return None, reasons, hints
    extra = {k: v for k, v in obj.items() if k not in KNOWN_FIELDS}
    return GoldenQuery(
        query_id=query_id, question=question, query_type=query_type, unanswerable=unanswerable,
        relevance=relevance, annotators=tuple(annotators), notes=notes,
        created_at=obj.get("created_at"), updated_at=obj.get("updated_at"),
        corpus_fingerprint=fingerprint, extra=extra,
    ), [], hints
