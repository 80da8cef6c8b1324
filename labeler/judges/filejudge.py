"""Judgments made elsewhere: a TREC qrels file or JSONL, read as one judge's grades.

TREC qrels: `query_id 0 doc_id grade` per line (spaces or tabs; blank lines skipped).
JSONL: one object per line, `{"query_id", "doc_id", "grade", "judge", "model", "rationale",
"raw"}`, or a golden-set line (`{"query_id", "relevance": {doc_id: grade}}`: every grade in it);
UMBRELA's names are read too (`qid`, `docid`, `judgment`, `reasoning`, `prediction`). A file of
`labeler export --with-machine` gives its lines' `machine_grades`, never their `relevance` (people's
grades). UMBRELA's own output carries no ids (only query and passage text): add `qid` and `docid`
to each record, as its batch input has them. A line with `"result_status": 0` is
UMBRELA saying it found no grade and fell back to 0: it is that pair's failure, never a 0.

Every bad line is reported (a grade outside 0-3, a missing field, a pair listed twice, bad
JSON, a bad id), and nothing from a file with bad lines is used. A JSONL file holding several
judges' lines needs `judge = "..."` in the declaration (or `judge=` here) to pick one.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from labeler.errors import BadLinesError, InputError, LineProblem
from labeler.ids import id_problem
from labeler.jsonlines import BadLine, json_values, open_lines, split_lines
from labeler.judges.base import JudgeFailure, JudgePair, JudgeResult, LocalJudge, MachineGrade, utc_now
from labeler.progress import Progress

_FIELDS = re.compile(r"[ \t]+")
FORMAT_HINT = ("a judge file is TREC qrels (`query_id 0 doc_id grade`, grade 0-3) or JSONL "
               '({"query_id": ..., "doc_id": ..., "grade": 0-3, "judge": ...}).')
_OTHER_SHAPES = {  # a qrels file whose every line has this many fields: what it is, and the fix
    3: ("TREC qrels have 4 (query_id 0 doc_id grade)",
        "insert the iteration column 0 as the second field of each line, e.g. awk '{print $1, 0, $2, $3}'."),
    6: ("this is a TREC run (query_id Q0 doc_id rank score tag), not a judge's grades",
        "give the judge's grades as TREC qrels (query_id 0 doc_id grade, grade 0-3) or JSONL; "
        "a run goes after --runs."),
}
EXPORTED_MACHINE = "machine_grades"  # a golden line's machine grades (`labeler export --with-machine`)
_ALIASES = {"query_id": ("query_id", "qid"), "doc_id": ("doc_id", "docid"), "grade": ("grade", "judgment"),
            "rationale": ("rationale", "reasoning"), "raw": ("raw", "prediction")}


class JudgmentsFormatError(BadLinesError):
    """A judge's file has one or more bad lines; nothing from it was used."""


@dataclass(frozen=True)
class Judgments:
    """One judge's grades read from a file: records per pair, and the pairs it failed on."""

    records: Mapping[tuple[str, str], dict] = field(default_factory=dict)  # (qid, doc) -> {grade, model, raw, ...}
    failures: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (qid, doc) -> why
    judge: str | None = None
    model: str = ""

    def grades(self) -> dict[tuple[str, str], int]:
        """{(query_id, doc_id): grade} (failures left out)."""
        return {key: r["grade"] for key, r in self.records.items()}


def _grade(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    return value if isinstance(value, int) and 0 <= value <= 3 else None


def _qrels_line(text: str) -> tuple[str, str, int] | str:
    fields = _FIELDS.split(text)
    if len(fields) != 4:
        return f"expected 4 fields (query_id 0 doc_id grade), found {len(fields)}"
    for what, value in (("query id", fields[0]), ("doc id", fields[2])):
        if why := id_problem(value, what):
            return why
    grade = _grade(fields[3])
    if grade is None:
        return f"grade {fields[3]!r} is not 0-3"
    return fields[0], fields[2], grade


def _json_line(obj) -> dict | str:
    if not isinstance(obj, dict):
        return "a line must be a JSON object"
    out = {}
    for name, keys in _ALIASES.items():
        present = [k for k in keys if k in obj]
        if len(present) > 1:
            return f"both {present[0]!r} and {present[1]!r} are given"
        out[name] = obj[present[0]] if present else None
    for what in ("query_id", "doc_id"):
        if out[what] is None:
            return f"{what} is missing"
        if isinstance(out[what], int) and not isinstance(out[what], bool):
            out[what] = str(out[what])  # TREC's numeric ids written as JSON numbers elsewhere: the qrels' text
        if why := id_problem(out[what], what.replace("_", " ")):
            return why
    out["failed"] = obj.get("result_status") == 0
    if out["grade"] is None and not out["failed"]:
        return "grade is missing"
    if not out["failed"] and _grade(out["grade"]) is None:
        return f"grade {out['grade']!r} is not 0-3"
    out["grade"] = None if out["failed"] else _grade(out["grade"])
    for name in ("judge", "model"):
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} must be a string"
        out[name] = value
    return out


def _json_lines(obj) -> dict | list[dict] | str:
    """One record, or a golden-style line's records (`{"query_id", "relevance": {doc_id: grade}}`); a line of
    `labeler export --with-machine` gives its machine grades, never its `relevance`: that is people's."""
    if isinstance(obj, dict) and EXPORTED_MACHINE in obj:
        entries = obj[EXPORTED_MACHINE]
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            return f"{EXPORTED_MACHINE} must be a list of objects"
        records = [_json_line({**e, "query_id": obj.get("query_id")}) for e in entries]
        return _tagged(records, "exported")
    if not isinstance(obj, dict) or "relevance" not in obj:
        return _json_line(obj)
    relevance = obj["relevance"]
    if not isinstance(relevance, dict):
        return "relevance must map doc ids to grades"
    rest = {k: v for k, v in obj.items() if k not in ("relevance", "question", "query_type", "unanswerable",
                                                      "annotators", "notes", "created_at", "updated_at",
                                                      "corpus_fingerprint")}
    records = [_json_line({**rest, "doc_id": doc_id, "grade": grade}) for doc_id, grade in relevance.items()]
    return _tagged(records, "people")


def _tagged(records: list[dict | str], tag: str) -> list[dict] | str:
    """The first bad record's reason, or the records marked with where they came from."""
    bad = next((r for r in records if isinstance(r, str)), None)
    return bad if bad is not None else [{**r, tag: True} for r in records]


def parse_judgments(lines: Iterable[tuple[int, object]], *, source: str | None = None,
                    judge: str | None = None) -> Judgments:
    """A judge's grades from numbered lines (`split_lines` or `open_lines`); JudgmentsFormatError
    listing every bad line; InputError when the file holds no grade or several judges' lines."""
    problems: list[LineProblem] = []
    rows: list[tuple[int, dict]] = []
    kind = None
    widths: set[int] = set()  # field counts of the qrels lines: one count the wrong shape is another format
    for number, text in lines:
        if isinstance(text, BadLine):
            problems.append(LineProblem(number, text.reason))
            continue
        if not text.strip():
            continue
        kind = kind or ("jsonl" if text.lstrip().startswith("{") else "qrels")
        if kind == "qrels":
            widths.add(len(_FIELDS.split(text.strip(" \t\r"))))
            got = _qrels_line(text.strip(" \t\r"))
            row = got if isinstance(got, str) else {"query_id": got[0], "doc_id": got[1], "grade": got[2],
                                                     "failed": False}
        else:
            [(_, value)] = list(json_values([(number, text)]))
            row = value.reason if isinstance(value, BadLine) else _json_lines(value)
        if isinstance(row, str):
            problems.append(LineProblem(number, row))
        else:
            rows.extend((number, r) for r in (row if isinstance(row, list) else [row]))
    if any(r.get("exported") for _, r in rows):  # an export --with-machine: its `relevance` is people's
        rows = [(n, r) for n, r in rows if not r.get("people")]
    if not rows and len(widths) == 1 and (shape := _OTHER_SHAPES.get(next(iter(widths)))):
        raise InputError(f"every line has {next(iter(widths))} fields: {shape[0]}", path=source,
                         line=problems[0].line, hint=shape[1])
    names = sorted({r["judge"] for _, r in rows if r.get("judge")})
    if judge is not None:
        rows = [(n, r) for n, r in rows if r.get("judge") in (None, judge)]
    elif len(names) > 1 and not problems:
        raise InputError(f"the file holds the grades of several judges ({', '.join(names)})", path=source,
                         hint='pick one with judge = "NAME" in the declaration.')
    seen: dict[tuple[str, str], int] = {}
    records: dict[tuple[str, str], dict] = {}
    failures: dict[tuple[str, str], str] = {}
    for number, row in rows:
        key = (str(row["query_id"]), str(row["doc_id"]))
        if key in seen:
            problems.append(LineProblem(number, f"document {key[1]!r} is listed twice for query {key[0]!r} "
                                                f"(first on line {seen[key]})"))
            continue
        seen[key] = number
        if row["failed"]:
            failures[key] = f"the judge found no grade (result_status 0, line {number})"
        else:
            records[key] = {k: row.get(k) for k in ("grade", "model", "raw", "rationale")}
    if problems:
        problems.sort(key=lambda p: p.line)
        raise JudgmentsFormatError(source, problems, hint=FORMAT_HINT)
    if not records and not failures:
        raise InputError("no judgments found" + (f" for judge {judge!r}" if judge else ""), path=source,
                         hint=FORMAT_HINT)
    models = sorted({r["model"] for r in records.values() if r.get("model")})
    return Judgments(records, failures, judge or (names[0] if names else None), models[0] if len(models) == 1 else "")


def read_judgments(source: str | Path, *, judge: str | None = None) -> Judgments:
    """A judge's file (TREC qrels or JSONL) from a path, or literal text holding a newline."""
    if isinstance(source, str) and "\n" in source:
        return parse_judgments(split_lines(source), source="<string>", judge=judge)
    with open_lines(source, hint=FORMAT_HINT) as (shown, lines):
        return parse_judgments(lines, source=shown, judge=judge)


class FileJudge(LocalJudge):
    """Judgments read from a file as a judge: a pair the file has is graded, one it lacks fails."""

    kind = "file"

    def __init__(self, spec) -> None:
        super().__init__(spec)
        self.path = spec.params["path"]
        self.judgments = read_judgments(self.path, judge=spec.params.get("judge"))

    def judge(self, pairs: Iterable[JudgePair], progress: Progress | None = None) -> Iterator[JudgeResult]:
        """The file's grade of each pair, or a failure when it has none."""
        pairs = list(pairs)
        at = utc_now()
        for done, pair in enumerate(pairs, start=1):
            key = (pair.query_id, pair.doc_id)
            record = self.judgments.records.get(key)
            if record is not None:
                raw = record.get("raw") if isinstance(record.get("raw"), str) else str(record["grade"])
                rationale = record.get("rationale") if isinstance(record.get("rationale"), str) else None
                yield MachineGrade(pair.query_id, pair.doc_id, record["grade"], self.name,
                                   record.get("model") or self.spec.model or self.judgments.model,
                                   self.spec.prompt_hash, dict(self.spec.params), pair.doc_hash, raw, rationale, at)
            else:
                yield JudgeFailure(pair.query_id, pair.doc_id,
                                   self.judgments.failures.get(key, f"no judgment of this pair in {self.path}"))
            if progress:
                progress(done, len(pairs), "judging")
