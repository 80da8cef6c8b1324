"""`labeler calibrate GOLDEN --judge FILE --runs A.trec B.trec C.trec D.trec --json`, checked the way the
issue's reviewer will: three annotators grade a collection (some pairs once, some two or three times),
`labeler export` writes its golden JSONL (the consensus), a judge's grades are a TREC qrels or a JSONL
file made here, four TREC runs; every figure of the JSON is then held against an outside oracle on
the same pairs and runs: sklearn (cohen_kappa_score, confusion_matrix), the krippendorff package,
scipy's kendalltau, pytrec_eval's nDCG@10 for the runs' order and a tau_AP written from its
definition. Then the mistakes people make with these files: one line (file, line, fix), exit 2."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import krippendorff
import numpy as np
import pytest
import pytrec_eval
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from labeler_storage import open_store

ANNOTATORS = ("asha", "bo", "chen")
RUNS = ("A.trec", "B.trec", "C.trec", "D.trec")
ISSUE_KEYS = {"pairs", "kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "confusion", "bias",
              "kendall_tau", "tau_ap", "ci95"}
MORE_KEYS = {"kendall_tau_filled", "tau_ap_filled", "bias_by_grade", "post_edit", "gate"}  # README: beyond the issue's
STATS = ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias", "kendall_tau", "tau_ap")


def floor_median(grades: list[int]) -> int:
    """The consensus rule as DESIGN states it, written again: the median, rounded down."""
    s = sorted(grades)
    return s[len(s) // 2] if len(s) % 2 else math.floor((s[len(s) // 2 - 1] + s[len(s) // 2]) / 2)


def tau_ap_oracle(reference: list[float], estimate: list[float]) -> float:
    """Yilmaz, Aslam and Robertson (SIGIR 2008), eq. 3: over the estimate's order (ties: the order given),
    the mean share of the runs above each run there that the reference ranks above it too."""
    order = sorted(range(len(estimate)), key=lambda i: -estimate[i])
    truth = sorted(range(len(reference)), key=lambda i: -reference[i])
    place = {run: n for n, run in enumerate(truth)}
    shares = [sum(place[above] < place[order[i]] for above in order[:i]) / i for i in range(1, len(order))]
    return 2 * sum(shares) / (len(order) - 1) - 1


def ndcg10(qrels: dict, run: dict) -> float:
    """pytrec_eval's nDCG@10 (trec_eval's ndcg_cut_10) averaged over the qrels' questions, 0 for one not run."""
    per = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)
    return sum(per.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels) / len(qrels)


def qrels_of(pairs: dict) -> dict:
    out: dict = {}
    for (q, d), g in pairs.items():
        out.setdefault(q, {})[d] = g
    return out


def make_case(tmp_path, seed: int):
    """People's grades in a collection, exported; the judge's grades (qrels and JSONL); four runs. Returns
    (people's per-annotator grades, the judge's grades, the runs)."""
    rng = np.random.default_rng(seed)
    truth = {(f"q-{q:02d}", f"d{d:02d}"): int(rng.integers(0, 4)) for q in range(12) for d in range(16)}
    by_annotator: dict = {}
    with open_store(tmp_path / "labeler.db") as store:
        for q in range(12):
            store.questions.add(f"Question {q}?", query_id=f"q-{q:02d}")
        for pair, latent in truth.items():
            if rng.random() < 0.35:
                continue  # nobody graded it: a hole
            who = rng.choice(ANNOTATORS, size=int(rng.integers(1, 4)), replace=False)
            for a in who:
                grade = int(np.clip(latent + rng.integers(-1, 2) * (rng.random() < 0.3), 0, 3))
                store.judgments.set(*pair, grade, annotator=str(a))
                by_annotator.setdefault(pair, {})[str(a)] = grade
    done = subprocess.run([sys.executable, "-m", "labeler_edge", "export", str(tmp_path / "golden.jsonl"), "--db",
                           str(tmp_path / "labeler.db")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    machine = {}
    for pair, latent in truth.items():
        if rng.random() < 0.85:  # the judge grades most pairs, people's and holes alike
            machine[pair] = int(np.clip(latent + rng.normal(0, 0.9 + seed / 4), 0, 3).round())
    lines = [f"{q}{' ' if i % 2 else chr(9)}0 {d} {g}\n" for i, ((q, d), g) in enumerate(sorted(machine.items()))]
    (tmp_path / "judge.qrels").write_text("".join(lines))
    (tmp_path / "judge.jsonl").write_text("".join(
        json.dumps({"qid": q, "docid": d, "judgment": g, "judge": "umbrela", "reasoning": "..."}) + "\n"
        for (q, d), g in machine.items()))
    runs = {}
    for r, name in enumerate(RUNS):  # rankings of the truth, close in quality (so the judge may reorder them)
        run = {f"q-{q:02d}": {f"d{d:02d}": float(truth[f"q-{q:02d}", f"d{d:02d}"] + rng.random() * (4 + r / 2))
                              for d in range(16)} for q in range(12)}
        runs[name] = run
        (tmp_path / name).write_text("".join(f"{q} Q0 {d} {rank} {s!r} {name}\n" for q, docs in run.items()
                                             for rank, (d, s) in enumerate(docs.items(), start=1)))
    return by_annotator, machine, runs


def calibrate(tmp_path, judge: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "labeler_edge", "calibrate", "golden.jsonl", "--judge", judge,
                           "--runs", *RUNS, "--json", *extra], capture_output=True, text=True, cwd=tmp_path)


@pytest.mark.parametrize("seed", range(3))
def test_calibrate_json_on_an_exported_golden_file_equals_the_outside_oracles(tmp_path, seed):
    by_annotator, machine, runs = make_case(tmp_path, seed)
    golden = [json.loads(line) for line in (tmp_path / "golden.jsonl").read_text().splitlines()]
    human = {(g["query_id"], d): grade for g in golden for d, grade in g["relevance"].items()}
    assert human == {pair: floor_median(list(grades.values())) for pair, grades in by_annotator.items()}
    assert any(len(g) == 3 for g in by_annotator.values()) and any(len(g) == 1 for g in by_annotator.values())

    done = calibrate(tmp_path, "judge.qrels", "--bootstrap", "300")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    got = json.loads(done.stdout)
    assert set(got) == ISSUE_KEYS | MORE_KEYS and got["post_edit"] is None and got["gate"] is None  # a judge file
    keys = sorted(set(human) & set(machine))
    a, b = [human[k] for k in keys], [machine[k] for k in keys]
    assert got["pairs"] == len(keys) and isinstance(got["pairs"], int)
    assert got["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert got["kappa_quadratic"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]),
                                                   abs=1e-12)
    for t in (1, 2):
        assert got[f"kappa_binary@{t}"] == pytest.approx(
            cohen_kappa_score([x >= t for x in a], [y >= t for y in b]), abs=1e-12)
    assert got["confusion"] == confusion_matrix(a, b, labels=[0, 1, 2, 3]).tolist()
    assert got["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=[a, b], level_of_measurement="ordinal",
                                                            value_domain=[0, 1, 2, 3]), abs=1e-9)
    assert got["bias"] == pytest.approx(float(np.mean(np.subtract(b, a))), abs=1e-12)

    # the runs' nDCG@10 under people's grades and the judge's of the same pairs, then their orders
    on_h, on_m = qrels_of({k: human[k] for k in keys}), qrels_of({k: machine[k] for k in keys})
    h = [ndcg10(on_h, runs[r]) for r in RUNS]
    m = [ndcg10(on_m, runs[r]) for r in RUNS]
    assert got["kendall_tau"] == pytest.approx(kendalltau(h, m).statistic, abs=1e-12)
    assert got["tau_ap"] == pytest.approx(tau_ap_oracle(h, m), abs=1e-12)
    # and all people's grades against them with the holes filled (the judge's grades of pairs nobody graded)
    asked = {q for q, _ in human}
    filled = {**{k: g for k, g in machine.items() if k[0] in asked}, **human}
    h_all = [ndcg10(qrels_of(human), runs[r]) for r in RUNS]
    f_all = [ndcg10(qrels_of(filled), runs[r]) for r in RUNS]
    assert got["kendall_tau_filled"] == pytest.approx(kendalltau(h_all, f_all).statistic, abs=1e-12)
    assert got["tau_ap_filled"] == pytest.approx(tau_ap_oracle(h_all, f_all), abs=1e-12)

    for stat in STATS:  # each a number, its interval [lo, hi] in ci95
        assert isinstance(got[stat], float) and math.isfinite(got[stat]), stat
        lo, hi = got["ci95"][stat]
        assert isinstance(lo, float) and isinstance(hi, float) and lo <= hi, stat
    for stat in ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias"):
        assert got["ci95"][stat][0] <= got[stat] <= got["ci95"][stat][1], stat
    assert set(got["ci95"]) == set(STATS) | {"kendall_tau_filled", "tau_ap_filled"}
    assert [len(row) for row in got["confusion"]] == [4] * 4 and sum(map(sum, got["confusion"])) == len(keys)

    # the same grades as UMBRELA-style JSONL give the same figures
    assert json.loads(calibrate(tmp_path, "judge.jsonl", "--bootstrap", "300").stdout) == got


def _one_line_exit_2(done: subprocess.CompletedProcess, *parts: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == "" and "Hint:" in done.stderr
    for part in parts:
        assert part in done.stderr, done.stderr


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("case")
    make_case(folder, 0)
    return folder


@pytest.fixture
def case(made, tmp_path):
    """The files of one generated case (made once), in a folder of this test's own to spoil."""
    for name in ("golden.jsonl", "judge.qrels", "judge.jsonl", *RUNS):
        shutil.copyfile(made / name, tmp_path / name)
    return tmp_path


def test_a_three_column_qrels_is_named_with_its_fix(case):
    text = (case / "judge.qrels").read_text()
    (case / "judge.qrels").write_text("".join(" ".join(line.split()[:1] + line.split()[2:]) + "\n"
                                              for line in text.splitlines()))
    _one_line_exit_2(calibrate(case, "judge.qrels"), "judge.qrels:1: every line has 3 fields",
                     "insert the iteration column 0")


@pytest.mark.parametrize("grade", ["4", "-1", "2.5", "high"])
def test_a_judge_grade_off_the_scale_is_refused_on_its_line(case, grade):
    lines = (case / "judge.qrels").read_text().splitlines(keepends=True)
    q, it, d, _ = lines[6].split()
    lines[6] = f"{q} {it} {d} {grade}\n"
    (case / "judge.qrels").write_text("".join(lines))
    _one_line_exit_2(calibrate(case, "judge.qrels"), f"judge.qrels:7: grade '{grade}' is not 0-3")


def test_a_golden_grade_off_the_scale_says_calibration_needs_0_to_3(case):
    lines = (case / "golden.jsonl").read_text().splitlines()
    first = json.loads(lines[1])
    first["relevance"][next(iter(first["relevance"]))] = 4
    (case / "golden.jsonl").write_text("\n".join([lines[0], json.dumps(first), *lines[2:]]) + "\n")
    done = calibrate(case, "judge.qrels")
    _one_line_exit_2(done, "golden.jsonl:2: grade 4", "0-3 scale")
    assert "--keep-scale" not in done.stderr  # calibrate has no such option


def test_people_s_grades_as_qrels_in_place_of_golden_are_named(case):
    done = subprocess.run([sys.executable, "-m", "labeler_edge", "calibrate", "judge.qrels", "--judge", "judge.qrels"],
                          capture_output=True, text=True, cwd=case)
    _one_line_exit_2(done, "judge.qrels:1: GOLDEN is not a golden JSONL file", "labeler export")


def test_a_judge_file_of_other_ids_says_which_ids_differ(case):
    text = (case / "judge.qrels").read_text()
    (case / "judge.qrels").write_text(text.replace("q-", "Q"))
    _one_line_exit_2(calibrate(case, "judge.qrels"), "no (question, document) pair has both",
                     "no question either (the judge's query ids are e.g. 'Q00', GOLDEN's 'q-00')")
    (case / "judge.qrels").write_text(text.replace(" d", " doc-"))
    _one_line_exit_2(calibrate(case, "judge.qrels"), "but no document", "judge's doc ids are e.g. 'doc-00'")


def test_a_judge_grading_questions_golden_lacks_is_warned_and_they_count_nowhere(case):
    base = json.loads(calibrate(case, "judge.qrels", "--bootstrap", "0").stdout)
    with open(case / "judge.qrels", "a") as f:
        f.write("q-99 0 d00 3\nq-99 0 d01 0\n")
    done = calibrate(case, "judge.qrels", "--bootstrap", "0")
    assert done.returncode == 0 and json.loads(done.stdout) == base
    assert done.stderr.startswith("Warning: 2 of the judge's") and "1 question GOLDEN lacks (e.g. 'q-99')" in done.stderr


def test_an_unanswerable_question_s_pairs_count_nowhere_as_in_a_collection(case):
    base = json.loads(calibrate(case, "judge.qrels", "--bootstrap", "0").stdout)
    with open(case / "golden.jsonl", "a") as f:  # people marked it unanswerable after grading two documents 0
        f.write(json.dumps({"query_id": "q-98", "question": "Is there a moon base?", "unanswerable": True,
                            "relevance": {"d00": 0, "d01": 0}}) + "\n")
    with open(case / "judge.qrels", "a") as f:
        f.write("q-98 0 d00 3\nq-98 0 d01 0\n")
    done = calibrate(case, "judge.qrels", "--bootstrap", "0")
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr  # GOLDEN has the question
    assert json.loads(done.stdout) == base  # neither pairs nor holes (labeler_app.judge_runs.human_pairs)


@pytest.mark.parametrize("body, parts", [
    ("q-00 Q0 d00 1 0.5\n", ["B.trec:1: expected 6 fields", "Hint:"]),  # one short line
    ("q-00 0 d00 3\nq-00 0 d01 1\n", ["B.trec:1: every line has 4 fields: this is TREC qrels", "not a ranking"]),
    ("q-00 d00 0.9\nq-00 d01 0.8\n", ["B.trec:1: every line has 3 fields", "query_id Q0 doc_id rank score tag"]),
    ('{"q-00": {"d00": 0.9}}\n', ["B.trec: this is JSON", "not a TREC run file"]),
    ("q-00 Q0 d00 1 high B\n", ["B.trec:1: score 'high' is not a number"]),
])
def test_a_run_file_that_is_not_trec_is_one_line(case, body, parts):
    (case / "B.trec").write_text(body)
    _one_line_exit_2(calibrate(case, "judge.qrels"), *parts)


def test_a_missing_file_is_one_line(case):
    _one_line_exit_2(calibrate(case, "nowhere.qrels"), "nowhere.qrels: no such file")
    (case / "C.trec").unlink()
    _one_line_exit_2(calibrate(case, "judge.qrels"), "C.trec: no such run file")
