"""`labeler score`, `labeler compare` and `labeler eval` through click's CliRunner."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import SAMPLE, need_datasets
from labeler_edge.cli import cli

SEED_GOLDEN = "\n".join(json.dumps(q) for q in [
    {"query_id": "q1", "question": "How many vacation days do new employees get?", "query_type": "policy",
     "relevance": {"d1": 1}},
    {"query_id": "q2", "question": "What is the hotel limit?", "query_type": "travel", "relevance": {"d6": 1}},
    {"query_id": "q3", "question": "What do I do if my laptop is stolen?", "query_type": "it", "relevance": {"d10": 1}},
]) + "\n"
SEED_RUN = """\
q1 Q0 d2 1 0.9 sys
q1 Q0 d1 2 0.8 sys
q1 Q0 d9 3 0.7 sys
q2 Q0 d6 1 0.9 sys
q2 Q0 d5 2 0.8 sys
q2 Q0 d7 3 0.7 sys
q3 Q0 d3 1 0.9 sys
q3 Q0 d4 2 0.8 sys
q3 Q0 d8 3 0.7 sys
"""
# A better system: d1 rises to rank 1 for q1 (0.95 > 0.9), d10 appears at rank 2 for q3.
BETTER_RUN = SEED_RUN.replace("q1 Q0 d1 2 0.8", "q1 Q0 d1 2 0.95").replace("q3 Q0 d4 2 0.8", "q3 Q0 d10 2 0.8")


@pytest.fixture
def seed_files(tmp_path):
    golden, run, better = tmp_path / "golden.jsonl", tmp_path / "run.trec", tmp_path / "better.trec"
    golden.write_text(SEED_GOLDEN, encoding="utf-8")
    run.write_text(SEED_RUN, encoding="utf-8")
    better.write_text(BETTER_RUN, encoding="utf-8")
    return golden, run, better


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_cli_score_seed_example_json(seed_files):
    golden, run, _ = seed_files
    result = invoke("score", golden, run, "--cutoffs", "1,3,5,10", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    # recall@1 = (0 + 1 + 0)/3, recall@3 = (1 + 1 + 0)/3, MRR = (1/2 + 1 + 0)/3
    assert round(data["metrics"]["recall@1"], 3) == 0.333
    assert round(data["metrics"]["recall@3"], 3) == 0.667
    assert data["metrics"]["mrr"] == pytest.approx(0.5)
    assert set(data) >= {"metrics", "ci95", "per_type", "per_query", "counts"}
    assert data["per_query"]["q1"]["first_relevant_rank"] == 2
    assert data["per_query"]["q1"]["top_k"][1] == {"doc_id": "d1", "score": 0.8, "grade": 1}
    assert data["per_type"]["travel"]["mrr"] == 1.0
    assert data["counts"] == {"questions": 3, "answerable": 3, "unanswerable": 0, "unjudged": 0,
                              "no_relevant": 0, "missing_from_run": 0, "extra_in_run": 0}
    lo, hi = data["ci95"]["recall@3"]
    assert lo <= data["metrics"]["recall@3"] <= hi


def test_cli_score_seed_example_table(seed_files):
    golden, run, _ = seed_files
    result = invoke("score", golden, run, "--cutoffs", "1,3,5,10")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1] for line in result.output.splitlines() if line.strip()}
    assert rows["recall@1"] == "0.333" and rows["recall@3"] == "0.667" and rows["mrr"] == "0.500"
    assert "By query type:" in result.output
    assert "Worst 3 questions by ndcg@10:" in result.output
    # q3 never finds d10: worst, first relevant rank "never"
    worst = result.output.split("Worst 3 questions by ndcg@10:")[1].splitlines()[2]
    assert worst.split()[:3] == ["q3", "0.000", "never"]


def test_cli_score_bad_run_file_exit_2_with_line(seed_files, tmp_path):
    golden, _, _ = seed_files
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 0.9 sys\nq1 Q0 d2 2 high sys\n")
    result = CliRunner().invoke(cli, ["score", str(golden), str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:2: score 'high' is not a number" in result.output and "Hint:" in result.output


def test_cli_score_bad_golden_exit_2_with_line(seed_files, tmp_path):
    _, run, _ = seed_files
    bad = tmp_path / "bad.jsonl"
    bad.write_text(SEED_GOLDEN + '{"query_id": "q9"}\n')
    result = CliRunner().invoke(cli, ["score", str(bad), str(run)])
    assert result.exit_code == 2
    assert f"{bad}:4:" in result.output


def test_cli_score_the_arguments_swapped_or_qrels_as_golden_is_one_line(seed_files, tmp_path):
    golden, run, _ = seed_files
    qrels = tmp_path / "golden.qrels"
    qrels.write_text("q1 0 d1 1\nq2 0 d6 1\n")
    for given, said in ((run, "this is a TREC run"), (qrels, "this is TREC qrels")):
        result = CliRunner().invoke(cli, ["score", str(given), str(run)])
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [result.stderr.strip()]
        assert f"{given}:1: {said}" in result.stderr and "`labeler score GOLDEN RUN`" in result.stderr


def test_cli_score_refuses_a_golden_set_with_nothing_relevant(seed_files, tmp_path):
    _, run, _ = seed_files
    zeros = tmp_path / "zeros.jsonl"
    zeros.write_text(SEED_GOLDEN.replace('": 1}', '": 0}'))
    result = CliRunner().invoke(cli, ["score", str(zeros), str(run)])
    assert result.exit_code == 2 and "every one of the 3 judged documents is graded 0" in result.stderr
    golden, _, _ = seed_files  # graded 0/1: nDCG counts the 1s whatever --min-grade, so it is scored
    assert CliRunner().invoke(cli, ["score", str(golden), str(run), "--min-grade", "2"]).exit_code == 0
    unanswerable = tmp_path / "with-unanswerable.jsonl"  # an abstention report has something to say
    unanswerable.write_text(zeros.read_text() + '{"query_id": "q4", "question": "Pets?", "unanswerable": true}\n')
    assert CliRunner().invoke(cli, ["score", str(unanswerable), str(run), "--abstain-threshold", "0.5"]).exit_code == 0


def test_cli_score_warns_when_the_scores_rest_on_almost_no_judgment(seed_files, tmp_path):
    golden, run, _ = seed_files
    other = tmp_path / "other.trec"  # the golden set's questions, another collection's documents
    other.write_text("".join(f"q{q} Q0 x{q}-{r} {r} {1 / r} sys\n" for q in (1, 2, 3) for r in range(1, 40)))
    result = CliRunner().invoke(cli, ["score", str(golden), str(other)])
    assert result.exit_code == 0 and "warning: judged@10 is 0.000" in result.stderr
    assert "warning" not in CliRunner().invoke(cli, ["score", str(golden), str(run)]).stderr


def test_cli_score_fail_under_exit_1_names_the_bar(seed_files):
    golden, run, _ = seed_files
    result = CliRunner().invoke(cli, ["score", str(golden), str(run), "--fail-under", "mrr=0.4",
                                      "--fail-under", "ndcg@10=0.6"])
    # mrr 0.5 passes; ndcg@10 = (0.631 + 1 + 0)/3 = 0.544 misses 0.6
    assert result.exit_code == 1
    assert "FAIL ndcg@10 = 0.5436 < 0.6" in result.output
    assert "FAIL mrr" not in result.output


def test_cli_score_fail_under_adds_missing_measure(seed_files):
    golden, run, _ = seed_files
    result = invoke("score", golden, run, "--cutoffs", "1", "--fail-under", "recall@3=0.5", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output)["metrics"]["recall@3"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("args, message", [
    (["--cutoffs", "1,x"], "bad cutoff 'x'"),
    (["--fail-under", "ndcg@10"], "bad --fail-under"),
    (["--fail-under", "bleu=0.3"], "unknown metric 'bleu'"),
    (["--worst-by", "ndcg@77"], "ndcg@77 was not computed"),
])
def test_cli_score_bad_options_exit_2(seed_files, args, message):
    golden, run, _ = seed_files
    result = CliRunner().invoke(cli, ["score", str(golden), str(run), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_cli_score_abstention_threshold(tmp_path, seed_files):
    _, run, _ = seed_files
    golden = tmp_path / "g.jsonl"
    golden.write_text(SEED_GOLDEN + json.dumps({"query_id": "q4", "question": "Pets?", "unanswerable": True}) + "\n")
    with_q4 = tmp_path / "r.trec"
    with_q4.write_text(SEED_RUN + "q4 Q0 d1 1 0.5 sys\n")
    result = invoke("score", golden, with_q4, "--abstain-threshold", "0.85", "--json")
    abstention = json.loads(result.output)["abstention"]
    # tops: answerable 0.9, 0.9, 0.9; unanswerable 0.5 -> at 0.85: 100% vs 0%
    assert abstention["at_threshold"] == {"threshold": 0.85, "unanswerable_abstained": 1.0,
                                          "answerable_abstained": 0.0, "balanced_accuracy": 1.0}
    assert abstention["suggested"]["threshold"] == 0.9
    assert "Abstention" in invoke("score", golden, with_q4).output


def test_cli_compare_saved_reports(seed_files, tmp_path):
    golden, run, better = seed_files
    for name, path in (("a.json", run), ("b.json", better)):
        (tmp_path / name).write_text(invoke("score", golden, path, "--json").output)
    result = invoke("compare", tmp_path / "a.json", tmp_path / "b.json", "-m", "mrr", "-m", "recall@1", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    # mrr per question: A = 1/2, 1, 0; B = 1, 1, 1/2 -> differences +1/2, 0, +1/2
    assert data["metrics"]["mrr"]["mean_difference"] == pytest.approx(1 / 3)
    assert (data["metrics"]["mrr"]["wins"], data["metrics"]["mrr"]["ties"], data["metrics"]["mrr"]["losses"]) == (2, 1, 0)
    assert data["per_query"]["q3"]["mrr"] == pytest.approx(0.5)
    assert 0 < data["metrics"]["mrr"]["p_value"] <= 1
    table = invoke("compare", tmp_path / "a.json", tmp_path / "b.json")
    assert "W/T/L" in table.output and "2/1/0" in table.output


def test_cli_compare_run_files_with_golden(seed_files):
    golden, run, better = seed_files
    result = invoke("compare", run, better, "--golden", golden, "-m", "mrr", "--json")
    assert json.loads(result.output)["metrics"]["mrr"]["mean_b"] == pytest.approx(2.5 / 3)


def test_cli_compare_refuses_non_report(seed_files):
    _, run, better = seed_files
    result = CliRunner().invoke(cli, ["compare", str(run), str(better)])
    assert result.exit_code == 2 and "not JSON" in result.output


def test_cli_score_beir_folder_with_keep_scale_reproduces_cranfield():
    folder = need_datasets() / "cranfield"
    run = folder / "runs" / "bm25s.top100.trec"
    refused = CliRunner().invoke(cli, ["score", str(folder), str(run)])
    assert refused.exit_code == 2 and "test.tsv:8: grade 4 for '13' is outside 0-3" in refused.output
    data = json.loads(invoke("score", folder, run, "--keep-scale", "--json", "--cutoffs", "10,100").output)
    expected = json.loads((folder / "runs" / "bm25s.top100.metrics.json").read_text())["results"]["test.tsv"]
    assert data["counts"]["answerable"] == 225
    assert data["metrics"]["ndcg@10"] == pytest.approx(expected["mean_over_judged_queries"]["ndcg_cut_10"], abs=5.1e-7)
    assert data["metrics"]["mrr"] == pytest.approx(expected["mean_over_judged_queries"]["recip_rank"], abs=5.1e-7)


def test_cli_eval_sample_corpus_json_save_run_and_fail_under(tmp_path):
    # The real packaged model over the small sample corpus; the second call reuses its cache.
    saved = tmp_path / "sample.trec"
    result = invoke("eval", SAMPLE, SAMPLE / "golden.jsonl", "-k", "20", "--cutoffs", "1,3,10",
                    "--json", "--save-ranking", saved)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["counts"]["answerable"] > 0 and data["config"]["k"] == 20
    assert 0.0 < data["metrics"]["ndcg@10"] <= 1.0
    # scoring the saved run gives exactly the numbers eval printed
    rescored = json.loads(invoke("score", SAMPLE / "golden.jsonl", saved, "--cutoffs", "1,3,10", "--json").output)
    assert rescored["metrics"] == data["metrics"]
    assert rescored["per_query"] == data["per_query"]

    missed = CliRunner().invoke(cli, ["eval", str(SAMPLE), str(SAMPLE / "golden.jsonl"), "-k", "20",
                                      "--cutoffs", "10", "--fail-under", "ndcg@10=1.01"])
    assert missed.exit_code == 1
    assert "FAIL ndcg@10" in missed.output


@pytest.mark.slow
def test_cli_eval_scifact_matches_published_minilm_scores():
    # REFERENCE_SCORES.md: MiniLM-L6-v2 exact search on SciFact test: nDCG@10 0.64508, R@100 0.92500.
    folder = need_datasets() / "scifact"
    result = invoke("eval", folder, folder, "-k", "100", "--cutoffs", "10,100", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["counts"]["answerable"] == 300
    assert data["metrics"]["ndcg@10"] == pytest.approx(0.645, abs=0.001)
    assert data["metrics"]["recall@100"] == pytest.approx(0.925, abs=0.002)


def test_cli_score_starts_without_heavy_libraries(seed_files):
    import subprocess
    import sys

    golden, run, _ = seed_files
    code = ("import sys; from click.testing import CliRunner; from labeler_edge.cli import cli; "
            f"r = CliRunner().invoke(cli, ['score', {str(golden)!r}, {str(run)!r}, '--json']); "
            "heavy = [m for m in ('torch', 'faiss', 'streamlit', 'sentence_transformers') if m in sys.modules]; "
            "print(r.exit_code, heavy); sys.exit(0 if r.exit_code == 0 and not heavy else 1)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cli_compare_cutoffs_choose_the_metrics_compared(seed_files, tmp_path):
    golden, run, better = seed_files
    paths = []
    for path in (run, better):
        saved = tmp_path / f"{path.stem}.json"
        saved.write_text(invoke("score", golden, path, "--json").stdout)
        paths.append(saved)
    data = json.loads(invoke("compare", *paths, "--cutoffs", "3", "--json").stdout)
    # cutoff 3 and the measures without a cutoff; nothing at 1, 5, 10 or 100
    assert list(data["metrics"]) == ["recall@3", "precision@3", "mrr@3", "ndcg@3", "hit@3", "mrr", "map",
                                     "r_precision", "judged@3", "ndcg_condensed@3"]
    from_runs = json.loads(invoke("compare", run, better, "--golden", golden, "--cutoffs", "3", "--json").stdout)
    assert list(from_runs["metrics"]) == list(data["metrics"])  # saved reports and run files: one rule
    assert len(json.loads(invoke("compare", *paths, "--json").stdout)["metrics"]) > 10  # no --cutoffs: all shared


def test_cli_compare_cutoffs_the_reports_lack_exits_2(seed_files, tmp_path):
    golden, run, better = seed_files
    paths = []
    for path in (run, better):
        saved = tmp_path / f"{path.stem}.json"
        saved.write_text(invoke("score", golden, path, "--cutoffs", "3", "--json").stdout)
        paths.append(saved)
    result = CliRunner().invoke(cli, ["compare", *map(str, paths), "--cutoffs", "10"])
    assert result.exit_code == 2 and "no metric at cutoff 10 (they were scored at 3)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Hint:" in result.stderr
