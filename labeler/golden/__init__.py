"""Golden sets: the model and health, and their file formats (golden JSONL v1, BEIR, TREC qrels).

Every format is a pure parse/serialize pair over text plus a thin read/write wrapper; lines are
read by `labeler.jsonlines` and ids follow `labeler.ids`. One module per topic:
`model` (GoldenQuery, GoldenSet, fingerprint), `health`, `validation` (grades, ids, bad lines),
`jsonl`, `beir`, `trec`.
"""
from labeler.golden.beir import BEIR_QRELS_HEADER, parse_beir_golden, read_beir_golden, serialize_beir, write_beir
from labeler.golden.health import TARGET_QUESTIONS, TARGET_UNANSWERABLE_SHARE, GoldenHealth, golden_health
from labeler.golden.jsonl import parse_golden_jsonl, read_golden, serialize_golden_jsonl, validate_golden, \
    write_golden
from labeler.golden.model import GRADE_MAX, GRADE_MIN, KNOWN_FIELDS, GoldenQuery, GoldenSet, golden_fingerprint
from labeler.golden.trec import serialize_trec_qrels, write_trec_qrels
from labeler.golden.validation import HINT_QUESTION, MAX_PROBLEMS, MAX_QUESTION_CHARS, grade_problem, question_problem
from labeler.jsonlines import MAX_LINE_BYTES

__all__ = [
    "BEIR_QRELS_HEADER", "GRADE_MAX", "GRADE_MIN", "HINT_QUESTION", "KNOWN_FIELDS", "MAX_LINE_BYTES", "MAX_PROBLEMS",
    "MAX_QUESTION_CHARS", "TARGET_QUESTIONS", "TARGET_UNANSWERABLE_SHARE", "GoldenHealth", "GoldenQuery", "GoldenSet",
    "golden_fingerprint", "golden_health", "grade_problem", "parse_beir_golden", "parse_golden_jsonl",
    "question_problem", "read_beir_golden", "read_golden", "serialize_beir", "serialize_golden_jsonl", "serialize_trec_qrels",
    "validate_golden", "write_beir", "write_golden", "write_trec_qrels",
]
