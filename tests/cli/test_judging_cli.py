"""`labeler simulate` on a generated BEIR folder, with the packaged model: the JSON shape, its
figures recomputed from the qrels here, and bad input as one line with exit 2."""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from judging_support import write_collection
from labeler_edge.cli import cli


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sim") / "tiny"
    return folder, write_collection(folder)


def _simulate(*args):
    result = CliRunner().invoke(cli, ["simulate", *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_simulate_cli_json_matches_the_qrels(tiny, tmp_path):
    folder, qrels = tiny
    runs = []
    for name, pick in (("first", lambda d: d[:4]), ("last", lambda d: d[-4:])):
        path = tmp_path / f"{name}.trec"
        path.write_text("".join(f"{q} Q0 {d} {r} {10 - r} {name}\n" for q, judged in qrels.items()
                                for r, d in enumerate(pick(sorted(judged)), start=1)))
        runs.append(path)
    out = _simulate(folder, "--strategy", "active", "--budget", 12, "--stop-sample", 0, "--json", "--runs", *runs)
    assert out["strategy"] == "active" and set(out["questions"]) == set(qrels)
    found = 0
    for qid, entry in out["questions"].items():
        assert len(entry["judged"]) == 12 == len(set(entry["judged"])) and entry["stopped_at"] is None
        found += sum(qrels[qid].get(d, 0) >= 1 for d in entry["judged"])
    summary = out["summary"]
    assert summary["relevant"] == sum(g >= 1 for judged in qrels.values() for g in judged.values()) == 60
    assert summary["relevant_found"] == found and summary["judgments"] == 60
    assert summary["tau"][-1]["judgments"] == 60 and summary["tau"][-1]["tau"] == 1.0


def test_simulate_cli_pool_is_the_whole_pool(tiny):
    folder, qrels = tiny
    out = _simulate(folder, "--strategy", "pool", "--json")
    assert all(len(v["judged"]) == len(set(v["judged"])) > 0 and v["stopped_at"] is None
               for v in out["questions"].values())
    assert out["summary"]["pool"]["judgments"] == out["summary"]["judgments"]
    # Each question judged until it has ceil(90%) of its pool's relevant: the position of that one.
    expected = 0
    for qid, entry in out["questions"].items():
        hits = [i for i, d in enumerate(entry["judged"], start=1) if qrels[qid].get(d, 0) >= 1]
        need = math.ceil(0.9 * len(hits))
        expected += hits[need - 1] if need else 0
    assert out["summary"]["pool"]["judgments_to_reach_90%_of_pool_relevant_each"] == \
        {"judgments": expected, "not_reached": 0}


def test_simulate_cli_allocate_spends_the_total(tiny):
    folder, qrels = tiny
    out = _simulate(folder, "--allocate", "--total", 37, "--json")
    judged = {q: v["judged"] for q, v in out["questions"].items()}
    assert sum(map(len, judged.values())) == 37 == out["summary"]["allocation"]["total"]
    assert out["summary"]["allocation"]["relevant_found"] == sum(
        sum(qrels[q].get(d, 0) >= 1 for d in order) for q, order in judged.items())
    text = CliRunner().invoke(cli, ["simulate", str(folder), "--allocate", "--total", "37"])
    assert text.exit_code == 0 and "37 judgments spread over the questions" in text.output


@pytest.mark.parametrize("args,words", [
    (["{missing}"], "not a BEIR folder"),
    (["{folder}", "--runs", "{folder}/one.trec"], "at least two runs"),
    (["{folder}", "--budget", "0"], "positive number"),
    (["{folder}", "--strategy", "pool", "--allocate"], "go with --strategy active"),
    (["{folder}", "--total", "50"], "only with --allocate"),
    (["{folder}", "--min-grade", "0"], "not in the range x>=1"),  # every judged document would be relevant
    (["{folder}", "--min-grade", "9"], "no document in the qrels has grade >= 9"),  # nothing would be
])
def test_simulate_cli_bad_input_is_one_line(tiny, tmp_path, args, words):
    folder, _ = tiny
    (folder / "one.trec").write_text("q1 Q0 vol-00 1 1.0 one\n")
    args = [a.format(folder=folder, missing=tmp_path / "nothing") for a in args]
    result = CliRunner().invoke(cli, ["simulate", *args])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr and "Hint:" in result.stderr


def test_simulate_cli_says_when_a_run_spent_less_than_the_pools_budget(tiny):
    folder, _ = tiny
    out = _simulate(folder, "--strategy", "active", "--budget", 3, "--stop-sample", 0, "--json")
    pool = out["summary"]["pool"]
    assert pool["judgments_within_pool_budget"] == out["summary"]["judgments"] == 15 < pool["judgments"]
    text = CliRunner().invoke(cli, ["simulate", str(folder), "--budget", "3", "--stop-sample", "0"])
    assert f"at the pool's budget ({pool['judgments']} judgments; this run made only 15 of them)" in text.output


def test_simulate_cli_shows_the_first_embedding_on_stderr(tmp_path, monkeypatch):
    # Cranfield's first run took 3 min 53 s with nothing on the screen.
    monkeypatch.setenv("LABELER_HOME", str(tmp_path / "home"))
    write_collection(tmp_path / "fresh")
    first = CliRunner().invoke(cli, ["simulate", str(tmp_path / "fresh"), "--budget", "3", "--stop-sample", "0", "--json"])
    assert first.exit_code == 0 and first.stderr.splitlines() == ["embedding: 60/60"]
    assert json.loads(first.stdout)["strategy"] == "active"  # the JSON on stdout alone
