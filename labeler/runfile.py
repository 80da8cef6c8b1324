"""TREC run files: one retrieved document per line, `query_id Q0 doc_id rank score tag`.

Parsed as trec_eval reads them: blank lines and `#` comment lines are skipped, fields after
the sixth are ignored, the rank column is ignored (order comes from the score, ties by doc id
descending). A document listed twice for one query is an error, as it is in trec_eval
("duplicate docs") and pytrec_eval (`parse_run` asserts).
"""
from __future__ import annotations

import io
import math
from pathlib import Path
from typing import IO, Mapping, NamedTuple

from labeler.errors import InputError, RunFileError
from labeler.metrics.rankings import trec_ranked

Run = dict[str, dict[str, float]]
RUN_FORMAT_HINT = "each line must be `query_id Q0 doc_id rank score tag`, separated by spaces or tabs."


class ScoredDoc(NamedTuple):
    """One line of a run: a document retrieved for a query, with its score."""

    query_id: str
    doc_id: str
    score: float


def _problem(fields: list[str]) -> str | None:
    if len(fields) < 6:
        return f"expected 6 fields (query_id Q0 doc_id rank score tag), found {len(fields)}"
    try:
        score = float(fields[4])
    except ValueError:
        return f"score {fields[4]!r} is not a number"
    if math.isnan(score):
        return "score is NaN"
    return None


def parse_run(text: str, *, source: str | None = None) -> Run:
    """Parse TREC run text into `{query_id: {doc_id: score}}` (query and doc order kept).

    Raises RunFileError naming the first bad line (and how many more there are).
    """
    run: Run = {}
    first_seen: dict[tuple[str, str], int] = {}
    problems: list[tuple[int, str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        problem = _problem(fields)
        if problem is not None:
            problems.append((number, problem, RUN_FORMAT_HINT))
            continue
        query_id, doc_id = fields[0], fields[2]
        ranking = run.setdefault(query_id, {})
        if doc_id in ranking:
            problems.append((number, f"document {doc_id!r} is listed twice for query {query_id!r} "
                             f"(first on line {first_seen[query_id, doc_id]})",
                             "keep one line per document and query (e.g. its best score); "
                             "trec_eval refuses duplicate documents too."))
            continue
        first_seen[query_id, doc_id] = number
        ranking[doc_id] = float(fields[4])
    if problems:
        number, reason, hint = problems[0]
        more = f" (and {len(problems) - 1} more bad lines)" if len(problems) > 1 else ""
        raise RunFileError(reason + more, path=source, line=number, hint=hint)
    if not run:
        raise RunFileError("no run lines found", path=source,
                           hint="a run file lists retrieved documents, " + RUN_FORMAT_HINT)
    return run


def serialize_run(run: Mapping[str, Mapping[str, float]], *, tag: str = "labeler") -> str:
    """TREC run text: queries in the given order, documents in trec_eval order, ranks from 1."""
    if not tag or any(c.isspace() for c in tag):
        raise InputError(f"run tag {tag!r} is empty or contains whitespace", hint="use a tag like labeler-1a2b3c.")
    lines = []
    for query_id, doc_scores in run.items():
        for rank, (doc_id, score) in enumerate(trec_ranked(doc_scores), start=1):
            for name, value in (("query id", query_id), ("doc id", doc_id)):
                if not value or any(c.isspace() for c in value):
                    raise InputError(f"{name} {value!r} is empty or contains whitespace; a TREC run "
                                     "cannot hold it", hint="rename the query or document without spaces.")
            lines.append(f"{query_id} Q0 {doc_id} {rank} {score!r} {tag}\n")
    return "".join(lines)


def read_run(source: str | Path | IO[str]) -> Run:
    """Read a run from a path, an open text file, or literal run text (a string with a newline)."""
    if hasattr(source, "read"):
        return parse_run(source.read(), source=getattr(source, "name", None))
    if isinstance(source, str) and "\n" in source:
        return parse_run(source, source="<string>")
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RunFileError("run file not found", path=path, hint="check the path.") from exc
    except IsADirectoryError as exc:
        raise RunFileError("expected a run file, got a folder", path=path,
                           hint="give the TREC run file itself.") from exc
    except UnicodeDecodeError as exc:
        line = text_line_of_offset(path.read_bytes(), exc.start)
        raise RunFileError("not UTF-8 text", path=path, line=line,
                           hint="save the run file as UTF-8.") from exc
    return parse_run(text, source=str(path))


def write_run(path: str | Path, run: Mapping[str, Mapping[str, float]], *, tag: str = "labeler") -> None:
    """Write `run` as a TREC run file (UTF-8)."""
    text = serialize_run(run, tag=tag)
    with io.open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def text_line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, offset) + 1
