"""Golden sets: the model, golden JSONL v1, BEIR import/export, TREC qrels export, health.

Every format is a pure parse/serialize pair over text plus a thin read/write wrapper.
Format rules are DESIGN.md "Golden JSONL (format v1)"; where it is silent this module decides:

- Blank (whitespace-only) lines are skipped wherever they are; they are not questions.
- A UTF-8 byte-order mark at the start of a file is ignored (Windows editors write one).
- A grade written as an integral float (`2.0`, as pandas writes it) is read as the integer 2;
  `2.5`, `"2"`, `true` and `null` are errors.
- Grades outside 0–3 are refused unless `keep_scale=True`; they are never clipped.
- Ids (query ids, doc ids) are non-empty strings without control characters (tab, newline)
  and without leading or trailing spaces, so every tabular export can hold them.
- A line longer than `MAX_LINE_BYTES` is refused and never held in memory whole.
- At most `MAX_PROBLEMS` bad lines are collected; past that the report says it stopped.
- A BEIR folder's queries with no qrels line are left out of the golden set (BEIR and
  trec_eval ignore them too), except those whose `metadata.unanswerable` is true (as
  `serialize_beir` writes them): those are kept as unanswerable questions.
- Serialization is canonical: known fields in a fixed order, then unknown fields sorted by
  name; relevance sorted by doc id; `ensure_ascii=False`; one object per line; final newline.
  So export -> import -> export is byte-identical.
"""
from __future__ import annotations

import codecs
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from labeler.errors import GoldenFormatError, InputError, LineProblem

FORMAT_VERSION = 1
GRADE_MIN, GRADE_MAX = 0, 3
MAX_LINE_BYTES = 1 << 20  # 1 MiB: room for tens of thousands of judgments on one question
MAX_PROBLEMS = 1000
TARGET_QUESTIONS = (50, 200)
TARGET_UNANSWERABLE_SHARE = (0.10, 0.20)

KNOWN_FIELDS = (
    "query_id", "question", "query_type", "unanswerable", "relevance", "annotators",
    "notes", "created_at", "updated_at", "corpus_fingerprint",
)

_HINT_GENERIC = (
    "fix the listed lines and import again; nothing was imported. Each line is one JSON object "
    'like {"query_id": "q-1", "question": "...", "relevance": {"doc-7": 2}}.'
)
_HINT_SCALE = (
    "grades are 0 (not relevant) to 3 (answers fully). To keep this file's own scale "
    "(e.g. Cranfield's -1 and 1-4), pass keep_scale=True (CLI: --keep-scale)."
)
_HINT_ENCODING = "save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 in.jsonl > out.jsonl`)."
_HINT_CORPUS = "check the doc ids against the corpus, or import against the corpus they came from."
_HINT_EMPTY = "the file must hold at least one question, one JSON object per line."


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class GoldenQuery:
    """One question of a golden set with its consensus grades (doc_id -> grade)."""

    query_id: str
    question: str
    query_type: str = ""
    unanswerable: bool = False
    relevance: Mapping[str, int] = field(default_factory=dict)
    annotators: tuple[str, ...] = ()
    notes: str = ""
    created_at: str | None = None
    updated_at: str | None = None
    corpus_fingerprint: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Own copies: a caller mutating its dict afterwards must not change this query.
        object.__setattr__(self, "relevance", dict(self.relevance))
        object.__setattr__(self, "annotators", tuple(self.annotators))
        object.__setattr__(self, "extra", {k: v for k, v in self.extra.items() if k not in KNOWN_FIELDS})

    def relevant(self, threshold: int = 1) -> frozenset[str]:
        """Doc ids graded at least `threshold`."""
        return frozenset(d for d, g in self.relevance.items() if g >= threshold)


@dataclass(frozen=True)
class GoldenSet:
    """An ordered, id-unique tuple of golden questions."""

    queries: tuple[GoldenQuery, ...]
    _by_id: dict[str, GoldenQuery] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))
        by_id: dict[str, GoldenQuery] = {}
        for q in self.queries:
            if q.query_id in by_id:
                raise InputError(f"duplicate query_id {q.query_id!r} in a golden set",
                                 hint="give every question a unique query_id.")
            by_id[q.query_id] = q
        object.__setattr__(self, "_by_id", by_id)

    def __len__(self) -> int:
        return len(self.queries)

    def __iter__(self) -> Iterator[GoldenQuery]:
        return iter(self.queries)

    def qrels(self) -> dict[str, dict[str, int]]:
        """query_id -> {doc_id: grade} for every question (an empty dict if it has none)."""
        return {q.query_id: dict(q.relevance) for q in self.queries}

    def query_types(self) -> dict[str, str]:
        """query_id -> query type ("" when not set)."""
        return {q.query_id: q.query_type for q in self.queries}

    def questions(self) -> dict[str, str]:
        """query_id -> question text."""
        return {q.query_id: q.question for q in self.queries}

    def relevant(self, threshold: int = 1) -> dict[str, set[str]]:
        """query_id -> doc ids graded at least `threshold` (sentence-transformers' shape)."""
        return {q.query_id: set(q.relevant(threshold)) for q in self.queries}

    def unanswerable_ids(self) -> frozenset[str]:
        """Ids of the questions marked unanswerable."""
        return frozenset(q.query_id for q in self.queries if q.unanswerable)

    def get(self, query_id: str) -> GoldenQuery | None:
        """The question with this id, or None."""
        return self._by_id.get(query_id)


def golden_fingerprint(golden: GoldenSet) -> str:
    """`sha256:<hex>` over what scoring depends on (ids, texts, types, flags, grades).

    Independent of question order, notes, annotators and timestamps, so a run can record
    which golden set it was scored against and two runs can be checked for comparability.
    """
    h = hashlib.sha256()
    for q in sorted(golden.queries, key=lambda q: q.query_id):
        record = [q.query_id, q.question, q.query_type, q.unanswerable, sorted(q.relevance.items())]
        h.update(json.dumps(record, ensure_ascii=False).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


# --------------------------------------------------------------------------- validation helpers


def id_problem(value: Any, what: str) -> str | None:
    """Why `value` is not a valid id (query id or doc id), or None if it is one."""
    if not isinstance(value, str):
        return f"{what} must be a string, got {_describe(value)}"
    if not value.strip():
        return f"{what} is empty"
    if value != value.strip():
        return f"{what} {value!r} has leading or trailing spaces"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return f"{what} {value!r} contains a tab, newline or other control character"
    return None


def grade_problem(value: Any, doc_id: str, keep_scale: bool) -> tuple[int | None, str | None, bool]:
    """(grade, reason, is_scale_problem) for one relevance value."""
    if isinstance(value, bool):
        return None, f"grade for {doc_id!r} is {json.dumps(value)}; a grade is an integer 0-3, not a boolean", False
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        return None, f"grade for {doc_id!r} must be an integer 0-3, got {_describe(value)}", False
    if not keep_scale and not GRADE_MIN <= value <= GRADE_MAX:
        return None, f"grade {value} for {doc_id!r} is outside 0-3", True
    return value, None, False


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if _jsonable(value) else repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object", type(None): "null"}.get(type(value), type(value).__name__)
    return f"{kind} {text}" if kind not in ("null",) else "null"


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


class _BadJSON(ValueError):
    pass


def _pairs_no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _BadJSON(f"duplicate key {key!r} in one object")
        out[key] = value
    return out


def _refuse_constant(name: str) -> Any:
    raise _BadJSON(f"{name} is not valid JSON")


def _loads(raw: str) -> Any:
    """json.loads that refuses duplicate keys and NaN/Infinity instead of silently accepting them."""
    return json.loads(raw, object_pairs_hook=_pairs_no_duplicates, parse_constant=_refuse_constant)


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"broken JSON: {exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "broken JSON: nested too deeply"
    return f"broken JSON: {exc}"


def _iso_problem(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        return f"'{name}' must be an ISO 8601 time string or null, got {_describe(value)}"
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return f"'{name}' {value!r} is not an ISO 8601 time (e.g. 2026-11-29T10:00:00Z)"
    return None


# --------------------------------------------------------------------------- line sources

# A line source yields (line_number, text or None, problem or None); text is None when the
# line could not be decoded or was too long, and the problem says why.
_Line = tuple[int, "str | None", "str | None"]


def _too_long(n_bytes: int) -> str:
    return f"line is {n_bytes:,} bytes long; the limit is {MAX_LINE_BYTES:,} bytes per line"


def _text_lines(text: str) -> Iterator[_Line]:
    if text.startswith("\ufeff"):
        text = text[1:]
    # Split on "\n" only: JSON strings may hold U+2028, which str.splitlines() would cut at.
    for n, raw in enumerate(text.split("\n"), start=1):
        if len(raw) > MAX_LINE_BYTES:
            yield n, None, _too_long(len(raw.encode("utf-8", "surrogatepass")))
            continue
        yield n, raw[:-1] if raw.endswith("\r") else raw, None


def _binary_lines(f: IO[bytes]) -> Iterator[_Line]:
    """Lines of a binary file, each decoded separately; memory stays under MAX_LINE_BYTES."""
    n = 0
    while True:
        chunk = f.readline(MAX_LINE_BYTES + 1)
        if not chunk:
            return
        n += 1
        if len(chunk) > MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            size = len(chunk)
            while not chunk.endswith(b"\n"):
                chunk = f.readline(1 << 20)
                if not chunk:
                    break
                size += len(chunk)
            yield n, None, _too_long(size - (1 if chunk.endswith(b"\n") else 0))
            continue
        if n == 1 and chunk.startswith(codecs.BOM_UTF8):
            chunk = chunk[len(codecs.BOM_UTF8):]
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield n, None, (f"not valid UTF-8: byte 0x{chunk[exc.start]:02x} at column {exc.start + 1}")
            continue
        if line.endswith("\n"):
            line = line[:-1]
        yield n, line[:-1] if line.endswith("\r") else line, None


def _open_lines(source: str | Path | IO) -> tuple[str | None, Iterator[_Line], Any]:
    """(display path, lines, thing to close) for a path, a binary file or a text file."""
    if hasattr(source, "read"):
        name = getattr(source, "name", None)
        probe = source.read(0)
        lines = _binary_lines(source) if isinstance(probe, bytes) else _text_lines(source.read())
        return (str(name) if isinstance(name, (str, Path)) else None), lines, None
    path = Path(source).expanduser()
    if not path.is_file():
        raise InputError("no such file", path=path, hint="check the path.")
    f = open(path, "rb")
    return str(path), _binary_lines(f), f


# --------------------------------------------------------------------------- golden JSONL v1


class _Problems:
    """Bad lines collected while parsing, with which hints apply."""

    def __init__(self) -> None:
        self.items: list[LineProblem] = []
        self.hints: set[str] = set()
        self.truncated = False

    def add(self, line: int, reason: str, hint: str = "") -> None:
        if hint:
            self.hints.add(hint)
        if len(self.items) >= MAX_PROBLEMS:
            self.truncated = True
            return
        self.items.append(LineProblem(line, reason))

    def raise_if_any(self, source: str | None) -> None:
        if not self.items:
            return
        items = list(self.items)
        if self.truncated:
            items.append(LineProblem(items[-1].line, f"stopped after {MAX_PROBLEMS} bad lines"))
        hint = next((h for h in (_HINT_EMPTY, _HINT_ENCODING, _HINT_SCALE, _HINT_CORPUS) if h in self.hints),
                    _HINT_GENERIC)
        raise GoldenFormatError(source, items, hint=hint)


def _query_from_object(obj: Any, keep_scale: bool, doc_ids: Collection[str] | None,
                       ) -> tuple[GoldenQuery | None, list[str], set[str]]:
    """(query, reasons, hints) for one decoded line; the query is None when reasons exist."""
    reasons: list[str] = []
    hints: set[str] = set()
    if not isinstance(obj, dict):
        return None, [f"expected a JSON object, got {_describe(obj)}"], hints

    for name in ("query_id", "question"):
        if name not in obj:
            reasons.append(f"missing '{name}'")
    query_id = obj.get("query_id")
    if "query_id" in obj and (why := id_problem(query_id, "'query_id'")):
        reasons.append(why)
    question = obj.get("question")
    if "question" in obj:
        if not isinstance(question, str):
            reasons.append(f"'question' must be a string, got {_describe(question)}")
        elif not question.strip():
            reasons.append("'question' is empty")

    def text_field(name: str) -> str:
        value = obj.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            reasons.append(f"'{name}' must be a string, got {_describe(value)}")
            return ""
        return value

    query_type = text_field("query_type")
    notes = text_field("notes")

    unanswerable = obj.get("unanswerable")
    if unanswerable is None:
        unanswerable = False
    elif not isinstance(unanswerable, bool):
        reasons.append(f"'unanswerable' must be true or false, got {_describe(unanswerable)}")
        unanswerable = False

    relevance: dict[str, int] = {}
    raw_relevance = obj.get("relevance")
    if raw_relevance is None:
        raw_relevance = {}
    if not isinstance(raw_relevance, dict):
        reasons.append(f"'relevance' must be an object of doc id -> grade, got {_describe(raw_relevance)}")
        raw_relevance = {}
    for doc_id, value in raw_relevance.items():
        if why := id_problem(doc_id, "doc id"):
            reasons.append(why)
            continue
        grade, why, scale = grade_problem(value, doc_id, keep_scale)
        if why:
            reasons.append(why)
            if scale:
                hints.add(_HINT_SCALE)
            continue
        relevance[doc_id] = grade  # type: ignore[assignment]

    annotators = obj.get("annotators")
    if annotators is None:
        annotators = []
    if not isinstance(annotators, list) or not all(isinstance(a, str) and a.strip() for a in annotators):
        reasons.append(f"'annotators' must be a list of names, got {_describe(annotators)}")
        annotators = []

    for name in ("created_at", "updated_at"):
        if why := _iso_problem(obj.get(name), name):
            reasons.append(why)
    fingerprint = obj.get("corpus_fingerprint")
    if fingerprint is not None and not isinstance(fingerprint, str):
        reasons.append(f"'corpus_fingerprint' must be a string or null, got {_describe(fingerprint)}")

    if unanswerable is True:
        relevant = [f"{d}={g}" for d, g in relevance.items() if g >= 1]
        if relevant:
            reasons.append("marked unanswerable but grades documents relevant (" + ", ".join(relevant[:3])
                           + (f", and {len(relevant) - 3} more" if len(relevant) > 3 else "") + ")")
    if doc_ids is not None:
        unknown = [d for d in relevance if d not in doc_ids]
        if unknown:
            hints.add(_HINT_CORPUS)
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


def _json_objects(lines: Iterable[_Line], problems: _Problems, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed JSON) per non-blank line; undecodable and broken lines go to `problems`,
    and a file with no content at all is reported as having no `what`."""
    saw_content = False
    for n, raw, problem in lines:
        if problem is not None:
            saw_content = True
            problems.add(n, problem, _HINT_ENCODING if "UTF-8" in problem else "")
            continue
        if not raw.strip():
            continue
        saw_content = True
        try:
            yield n, _loads(raw)
        except (ValueError, RecursionError) as exc:
            problems.add(n, _json_error(exc))
    if not saw_content:
        problems.add(1, f"the file has no {what} (it is empty or holds only blank lines)", _HINT_EMPTY)


def _parse_golden_lines(lines: Iterable[_Line], source: str | None, keep_scale: bool,
                        doc_ids: Collection[str] | None) -> GoldenSet:
    problems = _Problems()
    queries: list[GoldenQuery] = []
    first_line: dict[str, int] = {}
    for n, obj in _json_objects(lines, problems, "questions"):
        query, reasons, hints = _query_from_object(obj, keep_scale, doc_ids)
        if isinstance(obj, dict) and isinstance(obj.get("query_id"), str):
            qid = obj["query_id"]
            if qid in first_line:
                reasons.append(f"duplicate query_id {qid!r} (first on line {first_line[qid]})")
                query = None
            else:
                first_line[qid] = n
        if reasons:
            problems.add(n, "; ".join(reasons))
            for h in hints:
                problems.hints.add(h)
            continue
        queries.append(query)  # type: ignore[arg-type]
    problems.raise_if_any(source)
    return GoldenSet(tuple(queries))


def parse_golden_jsonl(text: str, *, source: str | None = None, keep_scale: bool = False,
                       doc_ids: Collection[str] | None = None) -> GoldenSet:
    """Parse golden JSONL v1 text; every bad line is reported in one GoldenFormatError."""
    return _parse_golden_lines(_text_lines(text), source, keep_scale, doc_ids)


def _query_object(q: GoldenQuery) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "query_id": q.query_id,
        "question": q.question,
        "query_type": q.query_type,
        "unanswerable": bool(q.unanswerable),
        "relevance": {d: q.relevance[d] for d in sorted(q.relevance)},
        "annotators": list(q.annotators),
        "notes": q.notes,
        "created_at": q.created_at,
        "updated_at": q.updated_at,
        "corpus_fingerprint": q.corpus_fingerprint,
    }
    for key in sorted(q.extra):
        obj[key] = q.extra[key]
    return obj


def serialize_golden_jsonl(golden: GoldenSet) -> str:
    """Canonical golden JSONL v1: one object per line, fixed key order, UTF-8 text, final newline."""
    return "".join(json.dumps(_query_object(q), ensure_ascii=False) + "\n" for q in golden.queries)


def read_golden(path: str | Path | IO, *, keep_scale: bool = False,
                doc_ids: Collection[str] | None = None) -> GoldenSet:
    """Read a golden JSONL file or a BEIR folder (queries.jsonl + qrels/test.tsv).

    `path` may also be an open file or literal JSONL text (a string holding a newline or
    starting with "{"), so tests can inline their data.
    """
    if isinstance(path, str) and ("\n" in path or path.lstrip().startswith("{")):
        return parse_golden_jsonl(path, keep_scale=keep_scale, doc_ids=doc_ids)
    if not hasattr(path, "read") and Path(path).expanduser().is_dir():
        return read_beir_golden(path, keep_scale=keep_scale, doc_ids=doc_ids)
    source, lines, closer = _open_lines(path)
    try:
        return _parse_golden_lines(lines, source, keep_scale, doc_ids)
    finally:
        if closer is not None:
            closer.close()


def validate_golden(golden: GoldenSet, *, keep_scale: bool = False,
                    doc_ids: Collection[str] | None = None) -> list[LineProblem]:
    """Problems the golden set would have as a file (line n = question n); empty if valid."""
    try:
        parse_golden_jsonl(serialize_golden_jsonl(golden), keep_scale=keep_scale, doc_ids=doc_ids)
    except GoldenFormatError as exc:
        return exc.problems
    return []


def _write_text_atomically(path: Path, text: str) -> None:
    """Write the whole file or nothing: a crash mid-write never leaves half a golden set."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_golden(golden: GoldenSet, path: str | Path) -> None:
    """Write golden JSONL v1, after checking it passes its own validator (else nothing is written)."""
    path = Path(path).expanduser()
    text = serialize_golden_jsonl(golden)
    # keep_scale: a set read with its own scale may be written back with it.
    try:
        parse_golden_jsonl(text, source=str(path), keep_scale=True)
    except GoldenFormatError as exc:
        raise GoldenFormatError(str(path), exc.problems,
                                hint="the golden set in memory is invalid (line n = question n); "
                                     "nothing was written.") from None
    _write_text_atomically(path, text)


# --------------------------------------------------------------------------- TREC qrels


def serialize_trec_qrels(golden: GoldenSet) -> str:
    """TREC qrels, `query_id 0 doc_id grade` per judged pair (questions in order, docs sorted).

    Questions with no judged document cannot be written in this format and are left out.
    """
    out = []
    for q in golden.queries:
        for doc_id in sorted(q.relevance):
            for what, value in (("query id", q.query_id), ("doc id", doc_id)):
                if not value or any(c.isspace() for c in value):
                    raise InputError(
                        f"{what} {value!r} contains whitespace, which TREC qrels cannot hold",
                        hint="export as --format jsonl or beir instead, or rename the id.")
            out.append(f"{q.query_id} 0 {doc_id} {q.relevance[doc_id]}\n")
    return "".join(out)


def write_trec_qrels(golden: GoldenSet, path: str | Path) -> None:
    """Write TREC qrels (see serialize_trec_qrels)."""
    _write_text_atomically(Path(path).expanduser(), serialize_trec_qrels(golden))


# --------------------------------------------------------------------------- BEIR

BEIR_QRELS_HEADER = "query-id\tcorpus-id\tscore"


def _check_tabular_id(value: str, what: str) -> None:
    if why := id_problem(value, what):
        raise InputError(why, hint="rename the id; tab-separated files cannot hold it.")


def serialize_beir(golden: GoldenSet) -> tuple[str, str]:
    """(queries.jsonl text, qrels tsv text) in BEIR's layout.

    Query type and the unanswerable flag go in each query's `metadata`, which BEIR ignores
    and `parse_beir_golden` reads back.
    """
    queries, qrels = [], [BEIR_QRELS_HEADER + "\n"]
    for q in golden.queries:
        _check_tabular_id(q.query_id, "query id")
        obj: dict[str, Any] = {"_id": q.query_id, "text": q.question}
        metadata = {}
        if q.query_type:
            metadata["query_type"] = q.query_type
        if q.unanswerable:
            metadata["unanswerable"] = True
        if metadata:
            obj["metadata"] = metadata
        queries.append(json.dumps(obj, ensure_ascii=False) + "\n")
        for doc_id in sorted(q.relevance):
            _check_tabular_id(doc_id, "doc id")
            qrels.append(f"{q.query_id}\t{doc_id}\t{q.relevance[doc_id]}\n")
    return "".join(queries), "".join(qrels)


def write_beir(golden: GoldenSet, folder: str | Path, *, split: str = "test") -> None:
    """Write `queries.jsonl` and `qrels/<split>.tsv` into `folder`."""
    folder = Path(folder).expanduser()
    queries, qrels = serialize_beir(golden)
    _write_text_atomically(folder / "queries.jsonl", queries)
    _write_text_atomically(folder / "qrels" / f"{split}.tsv", qrels)


def _parse_beir_queries(lines: Iterable[_Line], source: str | None
                        ) -> tuple[dict[str, tuple[str, dict[str, Any], int]], _Problems]:
    problems = _Problems()
    queries: dict[str, tuple[str, dict[str, Any], int]] = {}
    first_line: dict[str, int] = {}
    for n, obj in _json_objects(lines, problems, "queries"):
        if not isinstance(obj, dict):
            problems.add(n, f"expected a JSON object, got {_describe(obj)}")
            continue
        qid = obj.get("_id")
        if isinstance(qid, int) and not isinstance(qid, bool):
            qid = str(qid)
        reasons = []
        if "_id" not in obj:
            reasons.append("missing '_id'")
        elif why := id_problem(qid, "'_id'"):
            reasons.append(why)
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            reasons.append("'text' must be a non-empty string")
        metadata = obj.get("metadata") or {}
        if not isinstance(metadata, dict):
            reasons.append("'metadata' must be an object")
            metadata = {}
        if not reasons and qid in first_line:
            reasons.append(f"duplicate _id {qid!r} (first on line {first_line[qid]})")
        if reasons:
            problems.add(n, "; ".join(reasons))
            continue
        first_line[qid] = n
        queries[qid] = (text, metadata, n)
    return queries, problems


def _parse_beir_qrels(lines: Iterable[_Line], queries: Mapping[str, Any], keep_scale: bool,
                      doc_ids: Collection[str] | None) -> tuple[dict[str, dict[str, int]], _Problems]:
    problems = _Problems()
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for n, raw, problem in lines:
        if problem is not None:
            problems.add(n, problem, _HINT_ENCODING if "UTF-8" in problem else "")
            continue
        if not raw.strip():
            continue
        fields = raw.split("\t")
        if len(fields) != 3:
            problems.add(n, f"expected 3 tab-separated fields (query-id, corpus-id, score), got {len(fields)}")
            continue
        qid, doc_id, score = fields
        if n == 1 and not score.strip().lstrip("-").isdigit():
            continue  # the header: query-id corpus-id score
        reasons = []
        if why := id_problem(qid, "query-id"):
            reasons.append(why)
        elif qid not in queries:
            reasons.append(f"query-id {qid!r} is not in queries.jsonl")
        if why := id_problem(doc_id, "corpus-id"):
            reasons.append(why)
        elif doc_ids is not None and doc_id not in doc_ids:
            problems.hints.add(_HINT_CORPUS)
            reasons.append(f"corpus-id {doc_id!r} is not in the corpus")
        try:
            grade = int(score.strip())
        except ValueError:
            reasons.append(f"score must be an integer, got {score!r}")
        else:
            if not keep_scale and not GRADE_MIN <= grade <= GRADE_MAX:
                problems.hints.add(_HINT_SCALE)
                reasons.append(f"grade {grade} for {doc_id!r} is outside 0-3")
        if not reasons and (qid, doc_id) in first_line:
            reasons.append(f"duplicate pair {qid!r} {doc_id!r} (first on line {first_line[qid, doc_id]})")
        if reasons:
            problems.add(n, "; ".join(reasons))
            continue
        first_line[qid, doc_id] = n
        qrels.setdefault(qid, {})[doc_id] = grade
    return qrels, problems


def parse_beir_golden(queries_text: str, qrels_text: str, *, keep_scale: bool = False,
                      doc_ids: Collection[str] | None = None, queries_source: str | None = None,
                      qrels_source: str | None = None) -> GoldenSet:
    """A golden set from BEIR `queries.jsonl` and qrels TSV text (see the module docstring)."""
    return _beir_golden(_text_lines(queries_text), lambda: _text_lines(qrels_text), keep_scale, doc_ids,
                        queries_source, qrels_source)


def _beir_golden(query_lines: Iterable[_Line], qrels_lines, keep_scale: bool,
                 doc_ids: Collection[str] | None, queries_source: str | None,
                 qrels_source: str | None) -> GoldenSet:
    queries, problems = _parse_beir_queries(query_lines, queries_source)
    problems.raise_if_any(queries_source)
    qrels, problems = _parse_beir_qrels(qrels_lines(), queries, keep_scale, doc_ids)
    problems.raise_if_any(qrels_source)
    out = []
    for qid, (text, metadata, line) in queries.items():
        relevance = qrels.get(qid, {})
        unanswerable = metadata.get("unanswerable") is True
        if not relevance and not unanswerable:
            continue  # unjudged: BEIR and trec_eval ignore such queries (module docstring)
        if unanswerable and any(g >= 1 for g in relevance.values()):
            problems.add(line, f"query {qid!r} is marked unanswerable but has qrels with grade >= 1")
            continue
        query_type = metadata.get("query_type")
        rest = {k: v for k, v in metadata.items() if k not in ("query_type", "unanswerable")}
        out.append(GoldenQuery(
            query_id=qid, question=text,
            query_type=query_type if isinstance(query_type, str) else "",
            unanswerable=unanswerable, relevance=relevance,
            extra={"metadata": rest} if rest else {},
        ))
    problems.raise_if_any(queries_source)
    if not out:
        raise GoldenFormatError(qrels_source, [LineProblem(1, "no query has a qrels line")],
                                hint="check that the qrels' query-ids match queries.jsonl's _ids.")
    return GoldenSet(tuple(out))


def read_beir_golden(folder: str | Path, *, split: str = "test", keep_scale: bool = False,
                     doc_ids: Collection[str] | None = None) -> GoldenSet:
    """A golden set from a BEIR folder: `queries.jsonl` + `qrels/<split>.tsv`."""
    folder = Path(folder).expanduser()
    queries_path, qrels_path = folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"
    for p in (queries_path, qrels_path):
        if not p.is_file():
            raise InputError(f"not a BEIR folder: {p.relative_to(folder)} is missing", path=folder,
                             hint="a BEIR folder holds queries.jsonl and qrels/test.tsv; "
                                  "for a golden JSONL file pass the file itself.")
    with open(queries_path, "rb") as fq, open(qrels_path, "rb") as fr:
        return _beir_golden(_binary_lines(fq), lambda: _binary_lines(fr), keep_scale, doc_ids,
                            str(queries_path), str(qrels_path))


# --------------------------------------------------------------------------- health


@dataclass(frozen=True)
class GoldenHealth:
    """How a golden set compares with its targets (DESIGN.md "Labelling")."""

    n_questions: int
    n_unanswerable: int
    per_type: Mapping[str, int]
    without_relevant: tuple[str, ...]  # answerable questions with no document graded >= 1 yet
    target_questions: tuple[int, int] = TARGET_QUESTIONS
    target_unanswerable_share: tuple[float, float] = TARGET_UNANSWERABLE_SHARE

    @property
    def unanswerable_share(self) -> float:
        """Share of questions marked unanswerable (0.0 for an empty set)."""
        return self.n_unanswerable / self.n_questions if self.n_questions else 0.0

    @property
    def count_ok(self) -> bool:
        lo, hi = self.target_questions
        return lo <= self.n_questions <= hi

    @property
    def share_ok(self) -> bool:
        lo, hi = self.target_unanswerable_share
        return self.n_questions > 0 and lo <= self.unanswerable_share <= hi

    def warnings(self) -> tuple[str, ...]:
        """Human-readable notes on what is off target, each ending with what to do."""
        out = []
        lo, hi = self.target_questions
        if self.n_questions < lo:
            out.append(f"{self.n_questions} question(s); the target is {lo}-{hi}. Hint: write {lo - self.n_questions} more.")
        elif self.n_questions > hi:
            out.append(f"{self.n_questions} questions; the target is {lo}-{hi}. Hint: more questions cost "
                       "labelling time for little extra precision.")
        slo, shi = self.target_unanswerable_share
        if self.n_questions and not self.share_ok:
            out.append(f"{self.unanswerable_share:.0%} of questions are unanswerable; the target is "
                       f"{slo:.0%}-{shi:.0%}. Hint: "
                       + ("add questions the corpus cannot answer." if self.unanswerable_share < slo
                          else "add answerable questions."))
        if self.without_relevant:
            out.append(f"{len(self.without_relevant)} answerable question(s) have no relevant document yet. "
                       "Hint: label them, find a document with the search box, or mark them unanswerable.")
        return tuple(out)


def golden_health(golden: GoldenSet) -> GoldenHealth:
    """Question count, unanswerable share, questions per type, questions without a relevant doc."""
    per_type: dict[str, int] = {}
    for q in golden.queries:
        per_type[q.query_type] = per_type.get(q.query_type, 0) + 1
    return GoldenHealth(
        n_questions=len(golden.queries),
        n_unanswerable=sum(1 for q in golden.queries if q.unanswerable),
        per_type=dict(sorted(per_type.items())),
        without_relevant=tuple(q.query_id for q in golden.queries if not q.unanswerable and not q.relevant(1)),
    )


__all__ = [
    "FORMAT_VERSION", "GRADE_MAX", "GRADE_MIN", "MAX_LINE_BYTES", "GoldenHealth", "GoldenQuery",
    "GoldenSet", "golden_fingerprint", "golden_health", "grade_problem", "id_problem",
    "parse_beir_golden", "parse_golden_jsonl", "read_beir_golden", "read_golden", "serialize_beir",
    "serialize_golden_jsonl", "serialize_trec_qrels", "validate_golden", "write_beir", "write_golden",
    "write_trec_qrels",
]
