"""TREC qrels export: `query_id 0 doc_id grade`, one judged pair per line."""
from __future__ import annotations

from pathlib import Path

from labeler.errors import InputError
from labeler.golden.model import GoldenSet
from labeler.ids import ID_HINT, id_problem
from labeler.jsonlines import write_text_atomic


def serialize_trec_qrels(golden: GoldenSet) -> str:
    """TREC qrels, `query_id 0 doc_id grade` per judged pair (questions in order, docs sorted).

    Questions with no judged document cannot be written in this format and are left out.
    Ids outside the id policy (whitespace, a leading '#') would be misread by trec_eval: refused.
    """
    out = []
    for q in golden.queries:
        for doc_id in sorted(q.relevance):
            for what, value in (("query id", q.query_id), ("doc id", doc_id)):
                if why := id_problem(value, what):
                    raise InputError(f"{why}; TREC qrels cannot hold it", hint=ID_HINT)
            out.append(f"{q.query_id} 0 {doc_id} {q.relevance[doc_id]}\n")
    return "".join(out)


def write_trec_qrels(golden: GoldenSet, path: str | Path) -> None:
    """Write TREC qrels (see serialize_trec_qrels), whole or not at all."""
    write_text_atomic(path, serialize_trec_qrels(golden))
