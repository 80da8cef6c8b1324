"""`labeler calibrate`: a generated human file and machine file against sklearn and scipy."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from labeler.metrics import calc_aggregate, nDCG
from labeler_edge.cli import cli


def write_case(tmp_path, seed=0, n_questions=8, docs=12, n_runs=4):
    rng = np.random.default_rng(seed)
    human, machine = {}, {}
    with open(tmp_path / "golden.jsonl", "w") as golden:
        for q in range(n_questions):
            rel = {f"d{d}": int(rng.integers(0, 4)) for d in range(docs) if rng.random() < 0.8}
            human.update({(f"q{q}", d): g for d, g in rel.items()})
            golden.write(json.dumps({"query_id": f"q{q}", "question": f"question {q}", "relevance": rel}) + "\n")
    with open(tmp_path / "judge.qrels", "w") as judge:
        for (q, d), g in human.items():
            if rng.random() < 0.9:
                machine[q, d] = int(np.clip(g + rng.integers(-1, 2), 0, 3))
                judge.write(f"{q} 0 {d} {machine[q, d]}\n")
        judge.write("q0 0 hole-1 3\n")  # a pair no person graded: fills a hole, not a calibration pair
        machine["q0", "hole-1"] = 3
    runs = {}
    for r in range(n_runs):
        run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(docs)} for q in range(n_questions)}
        runs[f"r{r}.trec"] = run
        with open(tmp_path / f"r{r}.trec", "w") as f:
            for q, scores in run.items():
                for d, s in scores.items():
                    f.write(f"{q} Q0 {d} 0 {s!r} r{r}\n")
    return human, machine, runs


def test_calibrate_json_equals_sklearn_and_scipy(tmp_path):
    human, machine, runs = write_case(tmp_path)
    result = CliRunner().invoke(cli, ["calibrate", str(tmp_path / "golden.jsonl"), "--judge",
                                      str(tmp_path / "judge.qrels"), "--runs", *(str(tmp_path / r) for r in runs),
                                      "--json", "--bootstrap", "200"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    keys = sorted(set(human) & set(machine))
    a, b = [human[k] for k in keys], [machine[k] for k in keys]
    assert got["pairs"] == len(keys)
    assert got["post_edit"] is None  # a judge file: no suggestions were shown on the Label page
    assert got["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert got["kappa_quadratic"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]))
    assert got["kappa_binary@1"] == pytest.approx(cohen_kappa_score([x >= 1 for x in a], [y >= 1 for y in b]))
    assert got["kappa_binary@2"] == pytest.approx(cohen_kappa_score([x >= 2 for x in a], [y >= 2 for y in b]))
    confusion = np.zeros((4, 4), int)
    np.add.at(confusion, (a, b), 1)
    assert got["confusion"] == confusion.tolist()
    qh, qm = {}, {}
    for k in keys:
        qh.setdefault(k[0], {})[k[1]] = human[k]
        qm.setdefault(k[0], {})[k[1]] = machine[k]
    h = [calc_aggregate([nDCG @ 10], qh, run)["ndcg@10"] for run in runs.values()]
    m = [calc_aggregate([nDCG @ 10], qm, run)["ndcg@10"] for run in runs.values()]
    assert got["kendall_tau"] == pytest.approx(kendalltau(h, m).statistic)
    assert set(got["ci95"]) >= {"kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias",
                                "kendall_tau", "tau_ap"}
    lo, hi = got["ci95"]["kappa"]
    assert lo <= got["kappa"] <= hi


def test_calibrate_human_output_shows_the_confusion_matrix(tmp_path):
    write_case(tmp_path, n_runs=0)
    result = CliRunner().invoke(cli, ["calibrate", str(tmp_path / "golden.jsonl"), "--judge",
                                      str(tmp_path / "judge.qrels"), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    assert "confusion (rows: human grade 0-3, columns: judge grade 0-3)" in result.output
    assert "kappa_binary@1" in result.output and "95% CI" in result.output and "kendall" not in result.output


@pytest.mark.parametrize("judge_text, message", [
    ("q0 0 d1 3\nq0 0 d2 9\n", "judge.qrels:2: grade '9' is not 0-3. Hint:"),
    ("nobody 0 d1 3\n", "no (question, document) pair has both"),
    ('{"query_id": "q0", "doc_id": "d1"}\n', "judge.qrels:1: grade is missing. Hint:"),
])
def test_calibrate_bad_input_is_one_line_exit_2(tmp_path, judge_text, message):
    write_case(tmp_path, n_runs=0)
    (tmp_path / "judge.qrels").write_text(judge_text)
    done = subprocess.run([sys.executable, "-m", "labeler_edge", "calibrate", str(tmp_path / "golden.jsonl"), "--judge",
                           str(tmp_path / "judge.qrels")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_calibrate_one_run_is_refused(tmp_path):
    write_case(tmp_path, n_runs=1)
    result = CliRunner().invoke(cli, ["calibrate", str(tmp_path / "golden.jsonl"), "--judge",
                                      str(tmp_path / "judge.qrels"), "--runs", str(tmp_path / "r0.trec")])
    assert result.exit_code == 2 and "at least two runs" in result.output


def test_calibrate_reads_a_file_judge_declaration(tmp_path):
    human, machine, _ = write_case(tmp_path, n_runs=0)
    (tmp_path / "umbrela.toml").write_text('kind = "file"\npath = "judge.qrels"\n')  # relative to the declaration
    runner = CliRunner()
    args = ["calibrate", str(tmp_path / "golden.jsonl"), "--judge", str(tmp_path / "umbrela.toml"), "--bootstrap", "0"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0 and result.output.startswith("judge umbrela against")
    (tmp_path / "llm.toml").write_text('kind = "openai"\nmodel = "m"\nurl = "http://127.0.0.1:9/v1"\n')
    result = runner.invoke(cli, args[:3] + [str(tmp_path / "llm.toml")])
    assert result.exit_code == 2 and "calibrate reads grades already made" in result.output
