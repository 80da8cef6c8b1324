"""Golden JSONL v1 (DESIGN.md "Golden JSONL (format v1)"): parse/serialize text, read/write files.

Where the design is silent this module decides:
- Blank (whitespace-only) lines are skipped wherever they are; they are not questions.
- A grade written as an integral float (`2.0`, as pandas writes it) is read as the integer 2;
  `2.5`, `"2"`, `true` and `null` are errors.
- Grades outside 0-3 are refused unless `keep_scale=True`; they are never clipped.
- Ids (query ids, doc ids, the keys of doc-id maps such as `doc_hashes`) follow `labeler.ids`.
- Line reading (UTF-8, byte-order mark, line size limit, strict JSON) is `labeler.jsonlines`.
- At most `MAX_PROBLEMS` bad lines are collected; past that the report says it stopped.
- `read_golden` refuses a file over `MAX_GOLDEN_BYTES` or `MAX_GOLDEN_QUESTIONS` in one line,
  before reading it whole (the question text cap is `validation.MAX_QUESTION_CHARS`).
- Serialization is canonical: known fields in a fixed order, then unknown fields sorted by
  name; relevance sorted by doc id; `ensure_ascii=False`; one object per line; final newline.
  So export -> import -> export is byte-identical.
"""
from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from labeler.errors import GoldenFormatError, InputError, LineProblem
from labeler.golden.beir import read_beir_golden
from labeler.golden.model import GoldenQuery, GoldenSet
from labeler.golden.validation import HINT_EMPTY, Problems, query_from_object

# What one import may hold. DESIGN's target is 50-200 questions; the biggest BEIR test sets hold
# ~10,000 (Quora), so 20,000 questions and 100 MiB leave room for any real set while a 100,000-line
# file (which took the Golden set page 30 s and 550 MB) is refused before it is read.
MAX_GOLDEN_QUESTIONS = 20_000
MAX_GOLDEN_BYTES = 100 << 20
HINT_IMPORT = "split the file and import the parts one by one (each import adds to the collection)."
from labeler.jsonlines import BadLine, Line, json_values, open_lines, path_kind, split_lines, write_text_atomic


HINT_GOLDEN = ("a golden set is a golden JSONL file (one JSON object a line, as `labeler export` writes) or a BEIR "
               "folder (queries.jsonl + qrels/test.tsv); a run is scored against one: `labeler score GOLDEN RUN`.")
_TREC_SHAPES = {4: ("0", "TREC qrels (query_id 0 doc_id grade)"), 6: ("Q0", "a TREC run (query_id Q0 doc_id rank score tag)")}


def _refuse_trec(lines: Iterable[Line], source: str | None) -> Iterator[Line]:
    """The lines, unless the first one is a TREC qrels or run line: then one error naming the format. Read
    as JSON such a file gave a bad line for every line (1,000 listed for a qrels file; for a run, the limit
    on questions first, with a hint to split it)."""
    checked = False
    for n, raw in lines:
        if not checked and isinstance(raw, str) and raw.strip():
            checked = True
            fields = [] if raw.lstrip(" \t\ufeff").startswith(("{", "[")) else raw.split()  # JSON, however compact
            if (shape := _TREC_SHAPES.get(len(fields))) and fields[1] == shape[0]:
                raise InputError(f"this is {shape[1]}, not a golden set", path=source, line=n, hint=HINT_GOLDEN)
        yield n, raw


def _parse_golden_values(values: Iterable[tuple[int, Any]], source: str | None, keep_scale: bool,
                         doc_ids: Collection[str] | None, max_questions: int | None = None) -> GoldenSet:
    problems = Problems()
    queries: list[GoldenQuery] = []
    first_line: dict[str, int] = {}
    seen = 0
    for n, obj in values:
        seen += 1
        if max_questions is not None and seen > max_questions:  # stop reading: the rest is never parsed
            raise InputError(f"the file holds more than {max_questions:,} questions (line {n:,} is question "
                             f"{seen:,}); the limit is {max_questions:,} per import", path=source, hint=HINT_IMPORT)
        if isinstance(obj, BadLine):
            problems.add_bad_line(n, obj)
            continue
        query, reasons, hints = query_from_object(obj, keep_scale, doc_ids)
        if isinstance(obj, dict) and isinstance(obj.get("query_id"), str):
            qid = obj["query_id"]
            if qid in first_line:
                reasons.append(f"duplicate query_id {qid!r} (first on line {first_line[qid]})")
                query = None
            else:
                first_line[qid] = n
        if reasons:
            problems.add(n, "; ".join(reasons))
            problems.hints |= hints
            continue
        queries.append(query)  # type: ignore[arg-type]
    if not seen:
        problems.add(1, "the file has no questions (it is empty or holds only blank lines)", HINT_EMPTY)
    problems.raise_if_any(source)
    return GoldenSet(tuple(queries))


def parse_golden_jsonl(text: str, *, source: str | None = None, keep_scale: bool = False,
                       doc_ids: Collection[str] | None = None) -> GoldenSet:
    """Parse golden JSONL v1 text; every bad line is reported in one GoldenFormatError."""
    return _parse_golden_values(json_values(_refuse_trec(split_lines(text), source)), source, keep_scale, doc_ids)


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


def read_golden(path: str | Path | IO, *, keep_scale: bool = False, doc_ids: Collection[str] | None = None,
                max_questions: int | None = MAX_GOLDEN_QUESTIONS,
                max_bytes: int | None = MAX_GOLDEN_BYTES) -> GoldenSet:
    """Read a golden JSONL file or a BEIR folder (queries.jsonl + qrels/test.tsv), or an open file.

    A string is always a path; literal JSONL text goes through `parse_golden_jsonl`. A JSONL file
    over `max_bytes` or `max_questions` is refused in one line naming it, before it is read whole.
    """
    if not hasattr(path, "read"):
        kind = path_kind(path)
        if kind == "folder":
            return read_beir_golden(path, keep_scale=keep_scale, doc_ids=doc_ids)
        looks_like_text = isinstance(path, str) and ("\n" in path or path.lstrip().startswith("{"))
        if looks_like_text and kind == "missing":
            raise InputError("expected the path of a golden file, got text that looks like JSONL",
                             hint="pass a file path, or parse text with parse_golden_jsonl.")
    with open_lines(path, max_bytes=max_bytes, hint=HINT_IMPORT) as (source, lines):
        return _parse_golden_values(json_values(_refuse_trec(lines, source)), source, keep_scale, doc_ids, max_questions)


def validate_golden(golden: GoldenSet, *, keep_scale: bool = False,
                    doc_ids: Collection[str] | None = None) -> list[LineProblem]:
    """Problems the golden set would have as a file (line n = question n); empty if valid."""
    try:
        parse_golden_jsonl(serialize_golden_jsonl(golden), keep_scale=keep_scale, doc_ids=doc_ids)
    except GoldenFormatError as exc:
        return exc.problems
    return []


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
    write_text_atomic(path, text)
