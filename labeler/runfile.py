"""TREC run files: one retrieved document per line, `query_id Q0 doc_id rank score tag`.

Parsed as trec_eval reads them: blank lines and `#` comment lines are skipped, fields after
the sixth are ignored, the rank column is ignored (order comes from the score, ties by doc id
descending). A document listed twice for one query is an error, as it is in trec_eval
("duplicate docs") and pytrec_eval (`parse_run` asserts). Query and doc ids follow
`labeler.ids`: a doc id starting with `#` or holding a control character is a bad line.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from labeler.errors import InputError, LineProblem, RunFileError, RunFormatError
from labeler.ids import ID_HINT, id_problem
from labeler.jsonlines import require_file, write_text_atomic
from labeler.metrics.rankings import Run, trec_ranked

_FIELD_SEPARATOR = re.compile(r"[ \t]+")
RUN_FORMAT_HINT = "each line must be `query_id Q0 doc_id rank score tag`, separated by spaces or tabs."

_OTHER_SHAPES = {  # a file whose every line has this many fields: what it is, and the fix
    3: ("a TREC run has 6 (query_id Q0 doc_id rank score tag)",
        "write each line as `query_id Q0 doc_id rank score tag` (rank is not read: the score orders), "
        "e.g. awk '{print $1, \"Q0\", $2, NR, $3, \"run\"}'."),
    4: ("this is TREC qrels (query_id 0 doc_id grade), not a run",
        "give the run file (query_id Q0 doc_id rank score tag); a qrels file holds grades, not a ranking."),
}


def _problem(fields: list[str]) -> tuple[str, str] | None:
    """(reason, hint) when a line's fields are not a run line, else None."""
    if len(fields) < 6:
        return f"expected 6 fields (query_id Q0 doc_id rank score tag), found {len(fields)}", RUN_FORMAT_HINT
    # The query id cannot start with '#': such a line is a comment (skipped before this check).
    for what, value in (("query id", fields[0]), ("doc id", fields[2])):
        if why := id_problem(value, what):
            return why, ID_HINT
    try:
        score = float(fields[4])
    except ValueError:
        return f"score {fields[4]!r} is not a number", RUN_FORMAT_HINT
    if math.isnan(score):
        return "score is NaN", RUN_FORMAT_HINT
    return None


def parse_run(text: str, *, source: str | None = None,
              undecodable: tuple[int, ...] = ()) -> Run:
    """Parse TREC run text into `{query_id: {doc_id: score}}` (query and doc order kept).

    Raises RunFormatError listing every bad line (`undecodable`: numbers of lines that were not
    UTF-8, blanked in `text` by the reader), with the hints they need; RunFileError for no lines.
    """
    if text.lstrip(" \t\r\n\ufeff").startswith("{"):  # a run line never starts with "{": a JSON object
        raise RunFileError("this is JSON (a saved `--json` report?), not a TREC run file", path=source,
                           hint="score the TREC run file the report was made from; to compare two saved reports, "
                                "use `labeler compare A.json B.json`.")
    run: dict[str, dict[str, float]] = {}
    first_seen: dict[tuple[str, str], int] = {}
    problems: list[tuple[int, str, str]] = [(n, "not UTF-8 text", "save the run file as UTF-8.") for n in undecodable]
    widths: set[int] = set()  # field counts of the lines: one count of the wrong shape is another format
    # Fields are separated by spaces and tabs only, as trec_eval splits them: other whitespace
    # (U+00A0, U+2028, a form feed) stays inside its field, where the id policy refuses it.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.strip(" \t\r")
        fields = _FIELD_SEPARATOR.split(line) if line else []
        if not fields or fields[0].startswith("#"):
            continue
        widths.add(len(fields))
        problem = _problem(fields)
        if problem is not None:
            problems.append((number, *problem))
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
    if not run and not undecodable and len(widths) == 1 and (shape := _OTHER_SHAPES.get(next(iter(widths)))):
        raise RunFileError(f"every line has {next(iter(widths))} fields: {shape[0]}", path=source,
                           line=problems[0][0], hint=shape[1])
    if problems:
        problems.sort()
        hints = " ".join(dict.fromkeys(hint for _, _, hint in problems))
        raise RunFormatError(source, [LineProblem(n, reason) for n, reason, _ in problems], hint=hints)
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
                if why := id_problem(value, name):
                    raise InputError(f"{why}; a TREC run cannot hold it", hint=ID_HINT)
            lines.append(f"{query_id} Q0 {doc_id} {rank} {score!r} {tag}\n")
    return "".join(lines)


def read_run(source: str | Path | IO[str]) -> Run:
    """Read a run from a path, an open text file, or literal run text (a string with a newline)."""
    if hasattr(source, "read"):
        return parse_run(source.read(), source=getattr(source, "name", None))
    if isinstance(source, str) and "\n" in source:
        return parse_run(source, source="<string>")
    path = require_file(source, error=RunFileError, what="run file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunFileError(f"cannot read the run file: {exc.strerror or exc}", path=path,
                           hint="check the file's permissions.") from None
    return parse_run_bytes(data, source=str(path))


def parse_run_bytes(data: bytes, *, source: str | None = None) -> Run:
    """Parse run file bytes; a line that is not UTF-8 is reported with the other bad lines."""
    try:
        return parse_run(data.decode("utf-8"), source=source)
    except UnicodeDecodeError:
        pass
    lines, undecodable = [], []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append("")
            undecodable.append(number)
    return parse_run("\n".join(lines), source=source, undecodable=tuple(undecodable))


def write_run(path: str | Path, run: Mapping[str, Mapping[str, float]], *, tag: str = "labeler") -> None:
    """Write `run` as a TREC run file (UTF-8), whole or not at all."""
    write_text_atomic(path, serialize_run(run, tag=tag))
