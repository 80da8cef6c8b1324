"""Every metric equals pytrec_eval's (trec_eval 9) on thousands of generated questions, to 1e-9.

Generated: graded (-1..3, negatives as in Cranfield) and binary labels, heavy score ties,
doc ids whose string order differs from their numeric order (d10 < d9) and non-ASCII ids,
runs shorter than k, empty runs, questions missing from the run, questions with judgments
but nothing relevant, and run files with duplicate documents.
"""
from __future__ import annotations

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from generated_cases import random_collection  # noqa: E402 - its default shape is trec_eval's (TREC_EVAL)
from labeler.errors import RunFileError  # noqa: E402
from labeler.metrics import Measure, calc_per_query, trec_ranked  # noqa: E402
from labeler.runfile import parse_run, serialize_run  # noqa: E402

CUTOFFS = (1, 2, 3, 5, 10, 20)
FAMILIES = ("recall", "precision", "ndcg", "hit", "map")
MEASURES = [Measure(f, k) for f in FAMILIES for k in CUTOFFS] + [Measure("mrr"), Measure("map"), Measure("r_precision")]
TREC_MEASURES = {f"{fam}.{','.join(map(str, CUTOFFS))}" for fam in ("recall", "P", "ndcg_cut", "success", "map_cut")}
TREC_MEASURES |= {"recip_rank", "map", "Rprec"}


def cut_run(run: dict, k: int) -> dict:
    """The run truncated at k in trec_eval's order (for mrr@k against recip_rank)."""
    return {q: dict(trec_ranked(docs)[:k]) for q, docs in run.items()}


def assert_matches_pytrec_eval(qrels: dict, run: dict, *, min_grade: int = 1) -> int:
    ours = calc_per_query(MEASURES + [Measure("mrr", k) for k in CUTOFFS], qrels, run, min_grade=min_grade)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES, relevance_level=min_grade).evaluate(run)
    cut_rr = {k: pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=min_grade)
              .evaluate(cut_run(run, k)) for k in CUTOFFS}
    checked = 0
    for qid, values in ours.items():
        if qid not in theirs:
            # pytrec_eval leaves out a question missing from the run; trec_eval -c scores it 0.
            assert qid not in run
            assert all(v == 0.0 for v in values.values()), qid
            continue
        for m in MEASURES:
            assert values[str(m)] == pytest.approx(theirs[qid][m.trec_name], abs=1e-9), (qid, str(m))
        for k in CUTOFFS:
            assert values[f"mrr@{k}"] == pytest.approx(cut_rr[k][qid]["recip_rank"], abs=1e-9), (qid, k)
        checked += 1
    assert set(theirs) <= set(ours)
    return checked


def test_metrics_match_pytrec_eval_on_generated_graded_questions():
    qrels, run = random_collection(seed=1, n_queries=3000, binary=False)
    assert assert_matches_pytrec_eval(qrels, run) > 2500


def test_metrics_match_pytrec_eval_on_generated_binary_questions():
    qrels, run = random_collection(seed=2, n_queries=2000, binary=True)
    assert assert_matches_pytrec_eval(qrels, run) > 1600


def test_metrics_match_pytrec_eval_with_min_grade_2():
    # pytrec_eval's relevance_level: changes recall, P, MRR, MAP, Rprec, hit; nDCG keeps all gains.
    qrels, run = random_collection(seed=3, n_queries=1500, binary=False)
    assert assert_matches_pytrec_eval(qrels, run, min_grade=2) > 1200


def test_metrics_match_pytrec_eval_through_run_file_text():
    # The text path: serialize, parse with ours and with pytrec_eval.parse_run, score both.
    qrels, run = random_collection(seed=4, n_queries=800, binary=False)
    run = {q: docs for q, docs in run.items() if docs and all(np.isfinite(list(docs.values())))}
    text = serialize_run(run, tag="gen")
    ours, theirs = parse_run(text), pytrec_eval.parse_run(text.splitlines())
    assert ours == theirs
    assert assert_matches_pytrec_eval(qrels, ours) == len(run)


def test_metrics_refuse_duplicate_documents_like_pytrec_eval():
    # trec_eval stops on "duplicate docs" and pytrec_eval.parse_run asserts: a duplicate is an
    # error in both, never silently scored.
    qrels, run = random_collection(seed=5, n_queries=300, binary=True)
    rng = np.random.default_rng(5)
    refused = 0
    for qid, docs in run.items():
        if not docs:
            continue
        lines = serialize_run({qid: docs}, tag="gen").splitlines()
        duplicate = lines[int(rng.integers(len(lines)))].split()
        duplicate[4] = repr(float(rng.normal()))
        text = "\n".join(lines + [" ".join(duplicate)])
        with pytest.raises(AssertionError):
            pytrec_eval.parse_run(text.splitlines())
        with pytest.raises(RunFileError, match="listed twice"):
            parse_run(text)
        refused += 1
    assert refused > 200
