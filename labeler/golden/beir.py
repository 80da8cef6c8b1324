"""BEIR golden sets: `queries.jsonl` + `qrels/<split>.tsv`, read and written.

A BEIR folder's queries with no qrels line are left out of the golden set (BEIR and trec_eval
ignore them too), except those whose `metadata.unanswerable` is true (as `serialize_beir` writes
them): those are kept as unanswerable questions. Query type and the unanswerable flag travel in
each query's `metadata`, which BEIR ignores. Ids follow `labeler.ids`.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from labeler.errors import GoldenFormatError, InputError, LineProblem
from labeler.golden.model import GoldenQuery, GoldenSet
from labeler.golden.validation import HINT_CORPUS, HINT_EMPTY, HINT_IDS, Problems, describe, grade_problem
from labeler.ids import id_problem
from labeler.jsonlines import BadLine, Line, binary_lines, json_values, path_kind, split_lines, write_texts_atomic

BEIR_QRELS_HEADER = "query-id\tcorpus-id\tscore"

_Queries = dict[str, tuple[str, dict[str, Any], int]]  # _id -> (text, metadata, line)


def serialize_beir(golden: GoldenSet) -> tuple[str, str]:
    """(queries.jsonl text, qrels tsv text) in BEIR's layout; refuses ids outside the id policy."""
    queries, qrels = [], [BEIR_QRELS_HEADER + "\n"]
    for q in golden.queries:
        _check_id(q.query_id, "query id")
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
            _check_id(doc_id, "doc id")
            qrels.append(f"{q.query_id}\t{doc_id}\t{q.relevance[doc_id]}\n")
    return "".join(queries), "".join(qrels)


def _check_id(value: str, what: str) -> None:
    if why := id_problem(value, what):
        raise InputError(why, hint="rename the id; " + HINT_IDS)


def write_beir(golden: GoldenSet, folder: str | Path, *, split: str = "test") -> None:
    """Write `queries.jsonl` and `qrels/<split>.tsv` into `folder`, both staged before either is replaced."""
    folder = Path(folder).expanduser()
    queries, qrels = serialize_beir(golden)
    write_texts_atomic({folder / "queries.jsonl": queries, folder / "qrels" / f"{split}.tsv": qrels})


def _parse_queries(lines: Iterable[Line]) -> tuple[_Queries, Problems]:
    problems = Problems()
    queries: _Queries = {}
    saw_content = False
    for n, obj in json_values(lines):
        saw_content = True
        if isinstance(obj, BadLine):
            problems.add_bad_line(n, obj)
            continue
        if not isinstance(obj, dict):
            problems.add(n, f"expected a JSON object, got {describe(obj)}")
            continue
        qid = obj.get("_id")
        if isinstance(qid, int) and not isinstance(qid, bool):
            qid = str(qid)
        reasons = []
        if "_id" not in obj:
            reasons.append("missing '_id'")
        elif why := id_problem(qid, "'_id'"):
            reasons.append(why)
            problems.hints.add(HINT_IDS)
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            reasons.append("'text' must be a non-empty string")
        metadata = obj.get("metadata") or {}
        if not isinstance(metadata, dict):
            reasons.append("'metadata' must be an object")
            metadata = {}
        if not reasons and qid in queries:
            reasons.append(f"duplicate _id {qid!r} (first on line {queries[qid][2]})")
        if reasons:
            problems.add(n, "; ".join(reasons))
            continue
        queries[qid] = (text, metadata, n)
    if not saw_content:
        problems.add(1, "the file has no queries (it is empty or holds only blank lines)", HINT_EMPTY)
    return queries, problems


def _parse_qrels(lines: Iterable[Line], queries: Mapping[str, Any], keep_scale: bool,
                 doc_ids: Collection[str] | None) -> tuple[dict[str, dict[str, int]], Problems]:
    problems = Problems()
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for n, raw in lines:
        if isinstance(raw, BadLine):
            problems.add_bad_line(n, raw)
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
            problems.hints.add(HINT_IDS)
        elif qid not in queries:
            reasons.append(f"query-id {qid!r} is not in queries.jsonl")
        if why := id_problem(doc_id, "corpus-id"):
            reasons.append(why)
            problems.hints.add(HINT_IDS)
        elif doc_ids is not None and doc_id not in doc_ids:
            problems.hints.add(HINT_CORPUS)
            reasons.append(f"corpus-id {doc_id!r} is not in the corpus")
        try:
            grade: int | None = int(score.strip())
        except ValueError:
            grade = None
            reasons.append(f"score must be an integer, got {score!r}")
        else:
            grade, why, hint = grade_problem(grade, doc_id, keep_scale)
            if why:
                reasons.append(why)
                if hint:
                    problems.hints.add(hint)
        if not reasons and (qid, doc_id) in first_line:
            reasons.append(f"duplicate pair {qid!r} {doc_id!r} (first on line {first_line[qid, doc_id]})")
        if reasons:
            problems.add(n, "; ".join(reasons))
            continue
        first_line[qid, doc_id] = n
        qrels.setdefault(qid, {})[doc_id] = grade  # type: ignore[assignment]
    return qrels, problems


def parse_beir_golden(queries_text: str, qrels_text: str, *, keep_scale: bool = False,
                      doc_ids: Collection[str] | None = None, queries_source: str | None = None,
                      qrels_source: str | None = None) -> GoldenSet:
    """A golden set from BEIR `queries.jsonl` and qrels TSV text (see the module docstring)."""
    return _beir_golden(split_lines(queries_text), lambda: split_lines(qrels_text), keep_scale, doc_ids,
                        queries_source, qrels_source)


def _beir_golden(query_lines: Iterable[Line], qrels_lines: Callable[[], Iterable[Line]], keep_scale: bool,
                 doc_ids: Collection[str] | None, queries_source: str | None,
                 qrels_source: str | None) -> GoldenSet:
    queries, problems = _parse_queries(query_lines)
    problems.raise_if_any(queries_source)
    qrels, problems = _parse_qrels(qrels_lines(), queries, keep_scale, doc_ids)
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
        if path_kind(p) != "file":
            raise InputError(f"not a BEIR folder: {p.relative_to(folder)} is missing", path=folder,
                             hint="a BEIR folder holds queries.jsonl and qrels/test.tsv; "
                                  "(to score or import a golden JSONL file, pass the file itself).")
    with ExitStack() as files:
        try:
            fq, fr = (files.enter_context(open(p, "rb")) for p in (queries_path, qrels_path))
        except OSError as exc:
            raise InputError(f"cannot read the file: {exc.strerror or exc}", path=exc.filename or folder,
                             hint="check the files' permissions.") from None
        return _beir_golden(binary_lines(fq), lambda: binary_lines(fr), keep_scale, doc_ids,
                            str(queries_path), str(qrels_path))
