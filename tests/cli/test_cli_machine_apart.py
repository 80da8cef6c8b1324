"""The gate from the command line (issue 23, item 4): no CLI score counts a machine grade. A golden file
exported `--with-machine` scores exactly as the plain export (`score`, `compare --golden`), however
the judge grades; and the same file given as `--judge` is read as the judge's grades (its
`machine_grades`), never as its `relevance`, which is people's."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from labeler_storage import open_store

N_QUESTIONS, N_DOCS = 6, 10


def _cli(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "labeler_edge", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A collection whose people graded half of each question's documents, two judges ("kind" grades every
    document 3, "mean" the opposite of people's grade), a run ranking the ungraded documents first, and
    the plain and the --with-machine export. Returns (folder, people's grades, the judges' grades)."""
    folder = tmp_path_factory.mktemp("apart")
    rng = np.random.default_rng(5)
    human, judges = {}, {"kind": {}, "mean": {}}
    with open_store(folder / "labeler.db") as store:
        for q in range(N_QUESTIONS):
            qid = f"q-{q}"
            store.questions.add(f"Question {q}?", query_id=qid)
            for d in range(N_DOCS):
                pair = (qid, f"d{d}")
                if d % 2:
                    human[pair] = int(rng.integers(0, 4))
                    store.judgments.set(*pair, human[pair], annotator="asha")
                judges["kind"][pair] = 3
                judges["mean"][pair] = 3 - human[pair] if pair in human else 3
        for name, grades in judges.items():
            store.machine.save_grades([dict(query_id=q, doc_id=d, grade=g, judge=name, model="m", prompt_hash="p",
                                            params={}, doc_hash="", raw=str(g), at="2026-12-02T00:00:00Z")
                                       for (q, d), g in grades.items()])
    for name, extra in (("plain.jsonl", ()), ("machine.jsonl", ("--with-machine",))):
        done = _cli(folder, "export", name, "--db", "labeler.db", *extra)
        assert done.returncode == 0, done.stderr
    (folder / "run.trec").write_text("".join(f"q-{q} Q0 d{d} {d} {N_DOCS - d + (d % 2 == 0) * 20} r\n"
                                             for q in range(N_QUESTIONS) for d in range(N_DOCS)))
    (folder / "other.trec").write_text("".join(f"q-{q} Q0 d{d} {d} {d} o\n"
                                               for q in range(N_QUESTIONS) for d in range(N_DOCS)))
    return folder, human, judges


def test_a_golden_file_with_machine_grades_scores_as_the_plain_one(exported):
    folder, _, judges = exported
    line = json.loads((folder / "machine.jsonl").read_text().splitlines()[0])
    assert {m["judge"] for m in line["machine_grades"]} == set(judges)  # the grades are there, under their field
    plain = json.loads(_cli(folder, "score", "plain.jsonl", "run.trec", "--json").stdout)
    with_machine = json.loads(_cli(folder, "score", "machine.jsonl", "run.trec", "--json").stdout)
    assert with_machine["metrics"] == plain["metrics"] and with_machine["per_query"] == plain["per_query"]
    assert plain["metrics"]["precision@1"] == 0.0  # the run's top document is one only the judges graded
    a = _cli(folder, "compare", "run.trec", "other.trec", "--golden", "plain.jsonl", "--json")
    b = _cli(folder, "compare", "run.trec", "other.trec", "--golden", "machine.jsonl", "--json")
    assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
    assert json.loads(a.stdout)["metrics"] == json.loads(b.stdout)["metrics"]


def test_an_export_with_machine_grades_as_judge_is_read_as_the_judge_s_grades(exported):
    folder, human, judges = exported
    two = _cli(folder, "calibrate", "plain.jsonl", "--judge", "machine.jsonl", "--json", "--bootstrap", "0")
    assert two.returncode == 2 and "several judges (kind, mean)" in two.stderr  # never people's own grades
    (folder / "mean.toml").write_text('kind = "file"\npath = "machine.jsonl"\njudge = "mean"\n')
    done = _cli(folder, "calibrate", "plain.jsonl", "--judge", "mean.toml", "--json", "--bootstrap", "0")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    keys = sorted(human)
    assert got["pairs"] == len(human)
    assert got["kappa"] == pytest.approx(cohen_kappa_score([human[k] for k in keys],
                                                           [judges["mean"][k] for k in keys]))
    assert got["kappa"] < 0 and got["bias"] != 0.0
