"""Evaluation: score a run against a golden set (`evaluate`, `evaluate_golden` -> `EvalReport`),
with bootstrap CIs (`uncertainty`), abstention on unanswerable questions (`abstention`), paired
comparison of two runs (`compare`), and saved `--json` reports (`saved`)."""
from labeler.evaluation.abstention import (
    SUGGESTION_RULE, Abstention, AbstentionPoint, abstention_at, abstention_sweep,
)
from labeler.evaluation.compare import Comparison, MetricComparison, compare, compare_reports
from labeler.evaluation.evaluate import UNTYPED, evaluate, evaluate_golden
from labeler.evaluation.report import SCORED, UNANSWERABLE, UNJUDGED, EvalReport, QueryResult, RankedDoc
from labeler.evaluation.saved import parse_report_json, read_report
from labeler.evaluation.uncertainty import CI_RESAMPLES, TEST_RESAMPLES, bootstrap_ci, paired_randomization_test

__all__ = [
    "Abstention", "AbstentionPoint", "CI_RESAMPLES", "Comparison", "EvalReport", "MetricComparison", "QueryResult",
    "RankedDoc", "SCORED", "SUGGESTION_RULE", "TEST_RESAMPLES", "UNANSWERABLE", "UNJUDGED", "UNTYPED",
    "abstention_at", "abstention_sweep", "bootstrap_ci", "compare", "compare_reports", "evaluate", "evaluate_golden",
    "paired_randomization_test", "parse_report_json", "read_report",
]
