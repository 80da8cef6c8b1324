"""`labeler compare BASE.json NEW.json --fail-if-worse METRIC`: the noise-aware CI gate, through the
real CLI on reports that `labeler score --json` / `labeler eval --json` wrote.

The runs are built so the per-question values are known: every question has one relevant
document (grade 2) and nine judged grade-0 ones; "rank r" below is where the relevant one sits.
With a single relevant document ndcg@10 = 1 / log2(r + 1) and mrr = 1 / r.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from labeler.evaluation.gate import _p_text
from labeler_edge.cli import cli

N = 300


def golden_text(n: int = N) -> str:
    """n questions: relevant doc q{i}-rel (grade 2), judged grade-0 docs q{i}-n1..n9."""
    lines = []
    for i in range(n):
        relevance = {f"q{i}-rel": 2, **{f"q{i}-n{j}": 0 for j in range(1, 10)}}
        lines.append(json.dumps({"query_id": f"q{i}", "question": f"question {i}?", "relevance": relevance}))
    return "\n".join(lines) + "\n"


def run_text(ranks: list[int], *, unjudged_below_top: set[int] = frozenset()) -> str:
    """A TREC run: for question i the relevant doc at rank ranks[i], judged grade-0 docs around it
    (or, for i in `unjudged_below_top`, unjudged docs at ranks 2..10)."""
    lines = []
    for i, rank in enumerate(ranks):
        others = [f"q{i}-x{j}" if i in unjudged_below_top else f"q{i}-n{j}" for j in range(1, 10)]
        ranking = others[:rank - 1] + [f"q{i}-rel"] + others[rank - 1:]
        lines += [f"q{i} Q0 {doc} {r} {1.0 - r / 100:.2f} sys" for r, doc in enumerate(ranking, start=1)]
    return "\n".join(lines) + "\n"


def base_ranks() -> list[int]:
    # a varied baseline: ranks 1, 2, 3, 1, 2, 3, ...
    return [1 + i % 3 for i in range(N)]


def invoke(*args) -> "click.testing.Result":  # noqa: F821 - click's Result
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def saved(tmp_path):
    """Write the golden set; save(name, run text) scores it with `labeler score --json` into name.json."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text(golden_text(), encoding="utf-8")

    def save(name: str, text: str, *cutoffs: str) -> str:
        run = tmp_path / f"{name}.trec"
        run.write_text(text, encoding="utf-8")
        result = invoke("score", golden, run, "--json", *cutoffs)
        assert result.exit_code == 0, result.output
        out = tmp_path / f"{name}.json"
        out.write_text(result.stdout, encoding="utf-8")
        return str(out)

    return save


def test_gate_noise_only_passes(saved):
    base = base_ranks()
    new = list(base)
    # 30 questions lose a rank (1 -> 2), 28 gain one (2 -> 1): NEW is a little lower, by noise
    worse = [i for i in range(N) if base[i] == 1][:30]
    better = [i for i in range(N) if base[i] == 2][:28]
    for i in worse:
        new[i] = 2
    for i in better:
        new[i] = 1
    result = invoke("compare", saved("base", run_text(base)), saved("new", run_text(new)), "--fail-if-worse", "ndcg@10")
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    # mean difference = (28 - 30) * (1 - 1/log2(3)) / 300 = -0.0024605...
    assert line.startswith("PASS ndcg@10 ") and "is within noise: p=" in line and "≥ 0.05 over 300 questions" in line
    assert "(−0.0025)" in line and "judged@10 1.00 → 1.00" in line
    assert len(result.output.strip().splitlines()) == 1


def test_gate_real_drop_fails_with_the_reason(saved):
    base = base_ranks()
    new = [min(r + 3, 10) if i % 4 == 0 else r for i, r in enumerate(base)]   # 75 questions drop 3 ranks
    result = invoke("compare", saved("base", run_text(base)), saved("new", run_text(new)), "--fail-if-worse", "ndcg@10")
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert line.startswith("FAIL ndcg@10 dropped ") and "paired randomization p=" in line
    assert "< 0.05 over 300 questions" in line
    # every change is a loss: sign flips reach the observed mean only by flipping none back
    p = float(line.split("p=")[1].split()[0])
    assert p == pytest.approx(1 / 10_001, abs=1e-6)


def test_gate_improvement_passes(saved):
    base = base_ranks()
    new = [1] * N
    result = invoke("compare", saved("base", run_text(base)), saved("new", run_text(new)), "--fail-if-worse", "mrr")
    assert result.exit_code == 0
    assert result.output.startswith("PASS mrr did not drop: ")


def test_gate_drop_not_significant_at_a_stricter_alpha(saved):
    base = base_ranks()
    new = list(base)
    for i in [i for i in range(N) if base[i] == 1][:12]:      # 12 losses, 3 gains
        new[i] = 2
    for i in [i for i in range(N) if base[i] == 2][:3]:
        new[i] = 1
    a, b = saved("base", run_text(base)), saved("new", run_text(new))
    loose = invoke("compare", a, b, "--fail-if-worse", "ndcg@10", "--alpha", "0.2")
    strict = invoke("compare", a, b, "--fail-if-worse", "ndcg@10", "--alpha", "0.001")
    assert loose.exit_code == 1 and "< 0.2" in loose.output
    assert strict.exit_code == 0 and "≥ 0.001" in strict.output


def test_gate_low_judged_fails_with_the_reason(saved):
    base = [1] * N
    # NEW keeps every relevant doc at rank 1 (ndcg@10 unchanged) but fills ranks 2-10 of 100
    # questions with unjudged docs: judged@10 = (200 * 1 + 100 * 0.1) / 300 = 0.7
    holes = saved("new", run_text(base, unjudged_below_top=set(range(100))))
    result = invoke("compare", saved("base", run_text(base)), holes, "--fail-if-worse", "ndcg@10", "--min-judged", "0.8")
    assert result.exit_code == 1, result.output
    first, second = result.output.strip().splitlines()
    assert first.startswith("FAIL judged@10 below --min-judged 0.8: NEW 0.7000;") and "Hint:" in first
    assert second.startswith("ndcg@10 did not drop: 1.0000 → 1.0000 (+0.0000)")
    passes = invoke("compare", saved("base2", run_text(base)), saved("new2", run_text(base, unjudged_below_top={0})),
                    "--fail-if-worse", "ndcg@10", "--min-judged", "0.8")
    assert passes.exit_code == 0 and "judged@10 1.00 → 1.00" in passes.output


def test_gate_low_judged_on_base_too(saved):
    holes = set(range(150))
    base, new = saved("base", run_text([1] * N, unjudged_below_top=holes)), saved("new", run_text([1] * N))
    result = invoke("compare", base, new, "--fail-if-worse", "ndcg@10", "--min-judged", "0.8")
    # BASE judged@10 = (150 * 0.1 + 150 * 1) / 300 = 0.55
    assert result.exit_code == 1 and "FAIL judged@10 below --min-judged 0.8: BASE 0.5500;" in result.output


def test_gate_reads_judged_from_the_top_documents_of_an_older_report(saved, tmp_path):
    new = saved("new", run_text([1] * N, unjudged_below_top=set(range(100))))
    old = json.loads(open(new, encoding="utf-8").read())
    # a report saved before judged@k existed: no judged@ keys anywhere
    old["measures"] = [m for m in old["measures"] if not m.startswith("judged@")]
    for table in (old["metrics"], old["ci95"], *old["per_query"].values()):
        for key in [k for k in table if k.startswith("judged@")]:
            del table[key]
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    base = saved("base", run_text([1] * N))
    result = invoke("compare", base, tmp_path / "old.json", "--fail-if-worse", "ndcg@10", "--min-judged", "0.8")
    assert result.exit_code == 1 and "NEW 0.7000" in result.output  # 10 saved top documents suffice for k = 10
    deeper = CliRunner().invoke(cli, ["compare", base, str(tmp_path / "old.json"), "--fail-if-worse", "ndcg@100",
                                      "--min-judged", "0.8"])
    assert deeper.exit_code == 2
    assert "old.json: the report has no judged@100, which --min-judged checks" in deeper.output


def test_gate_malformed_file_exit_2_one_line(saved, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"metrics": {"ndcg@10": 0.5}, "per_query": ', encoding="utf-8")
    result = CliRunner().invoke(cli, ["compare", saved("base", run_text(base_ranks())), str(bad),
                                      "--fail-if-worse", "ndcg@10"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert f"{bad}:1: not JSON" in result.output and "Hint:" in result.output


def test_gate_without_per_question_values_exit_2_with_hint(saved, tmp_path):
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"metrics": {"ndcg@10": 0.7}, "per_query": {}}), encoding="utf-8")
    result = CliRunner().invoke(cli, ["compare", saved("base", run_text(base_ranks())), str(summary),
                                      "--fail-if-worse", "ndcg@10"])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "summary.json: the report has the mean of ndcg@10 but no scored question, which the paired test needs" \
        in result.output and "Hint: save the whole output" in result.output


def test_gate_metric_not_in_the_reports_exit_2(saved):
    a = saved("base", run_text(base_ranks()), "--cutoffs", "1,10")
    result = CliRunner().invoke(cli, ["compare", a, a, "--fail-if-worse", "ndcg@5"])
    assert result.exit_code == 2 and "the report has no ndcg@5" in result.output and "--cutoffs 5" in result.output


@pytest.mark.parametrize("args, message", [
    (["--fail-if-worse", "bleu@10"], "unknown metric 'bleu@10'"),
    (["--fail-if-worse", "mrr", "--min-judged", "0.8"], "--min-judged needs a metric with a cutoff"),
    (["--min-judged", "0.8"], "--min-judged is part of the gate"),
    (["--fail-if-worse", "ndcg@10", "--alpha", "1.5"], "--alpha"),
])
def test_gate_bad_options_exit_2(saved, args, message):
    a = saved("base", run_text(base_ranks()))
    result = CliRunner().invoke(cli, ["compare", a, a, *args])
    assert result.exit_code == 2 and message in result.output


def test_gate_json_has_the_verdict(saved):
    base = base_ranks()
    new = [min(r + 3, 10) if i % 4 == 0 else r for i, r in enumerate(base)]
    result = CliRunner().invoke(cli, ["compare", saved("base", run_text(base)), saved("new", run_text(new)),
                                      "--fail-if-worse", "ndcg@10", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["gate"]["passed"] is False and data["gate"]["dropped"] is True
    assert data["gate"]["questions"] == N and data["gate"]["judged_new"] == 1.0
    assert set(data["metrics"]) == {"ndcg@10", "judged@10"}
    assert data["gate"]["lines"][0].startswith("FAIL ndcg@10 dropped")


def test_gate_on_run_files_with_golden(saved, tmp_path):
    saved("base", run_text(base_ranks()))
    new_ranks = [min(r + 3, 10) if i % 4 == 0 else r for i, r in enumerate(base_ranks())]
    saved("new", run_text(new_ranks))
    # cutoffs 1,3 only: the gate still scores ndcg@20 and judged@20 for the metric it was given
    result = invoke("compare", tmp_path / "base.trec", tmp_path / "new.trec", "--golden", tmp_path / "golden.jsonl",
                    "--cutoffs", "1,3", "--fail-if-worse", "ndcg@20", "--min-judged", "0.9")
    assert result.exit_code == 1 and result.output.startswith("FAIL ndcg@20 dropped")


def test_gate_fails_when_new_leaves_out_questions_base_scores(saved, tmp_path):
    """A system that fails on the hard questions, or a report cut short, must not pass on the rest."""
    base = saved("base", run_text(base_ranks()))
    report = json.loads((tmp_path / "base.json").read_text(encoding="utf-8"))
    for q in ("q3", "q7"):  # as `labeler eval --system` saves them: left out, listed with the error
        del report["per_query"][q]
    report["settings"]["failed"] = {"q3": "timeout: no answer in 10 s", "q7": "http_status: HTTP 500"}
    del report["per_query"]["q9"]  # and one more simply missing
    new = tmp_path / "new.json"
    new.write_text(json.dumps(report), encoding="utf-8")
    result = invoke("compare", base, new, "--fail-if-worse", "ndcg@10")
    assert result.exit_code == 1, result.output
    first, second = result.output.strip().splitlines()
    assert first == ("FAIL NEW leaves out 3 of the questions BASE scores: 2 failed in NEW (first: q3 — timeout: no "
                     "answer in 10 s); 1 not in NEW's report (first: q9); a mean over the rest vouches for none of "
                     "them. Hint: fix what failed, or score NEW on the same golden set.")
    assert second.startswith("ndcg@10 did not drop: ") and "over 297 questions (3 not in both left out)" in second
    data = json.loads(invoke("compare", base, new, "--fail-if-worse", "ndcg@10", "--json").stdout)["gate"]
    assert data["passed"] is False and data["lost"] == ["q3", "q7", "q9"]
    assert data["failed_in_new"] == {"q3": "timeout: no answer in 10 s", "q7": "http_status: HTTP 500"}
    # NEW scoring questions BASE does not (the golden set grew) fails nothing.
    assert invoke("compare", new, base, "--fail-if-worse", "ndcg@10").output.startswith("PASS ")


def test_gate_notes_questions_judged_differently(saved, tmp_path):
    base = saved("base", run_text(base_ranks()))
    golden = tmp_path / "golden.jsonl"
    lines = golden.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[4])
    first["relevance"]["q4-n1"] = 1  # q4 gains a relevant document
    golden.write_text("\n".join([*lines[:4], json.dumps(first), *lines[5:]]) + "\n", encoding="utf-8")
    new = saved("new", run_text(base_ranks()))
    result = invoke("compare", base, new, "--fail-if-worse", "ndcg@10")
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[1] == (
        "Note: 1 question was judged differently for BASE and NEW (first: q4): the change mixes the system with "
        "the golden set. Hint: score both runs against one golden set, e.g. `labeler compare BASE.trec NEW.trec "
        "--golden GOLDEN`.")


@pytest.mark.parametrize("p, alpha, expected", [
    (0.41, 0.05, "0.41"), (0.0004, 0.05, "0.0004"), (1 / 10_001, 0.05, "0.0001"), (0.049995, 0.05, "0.04999"),
    (0.05, 0.05, "0.05"), (1.0, 0.05, "1.00"),
])
def test_gate_p_value_text_stays_on_its_side_of_alpha(p, alpha, expected):
    assert _p_text(p, alpha) == expected


@pytest.mark.slow
def test_gate_bm25_after_dense_on_the_sample_corpus_is_a_real_drop(tmp_path):
    # The packaged model and BM25 over the sample corpus and its golden set (about 12 s: the dense
    # run embeds the corpus). On it dense ndcg@10 is about 0.82 and BM25 about 0.57 over 53
    # answerable questions; the gate must call that a drop and the reverse a pass.
    reports = {}
    for retriever in ("dense", "bm25"):
        result = invoke("eval", SAMPLE, SAMPLE / "golden.jsonl", "--retriever", retriever, "--cutoffs", "1,10", "--json")
        assert result.exit_code == 0, result.output
        reports[retriever] = tmp_path / f"{retriever}.json"
        reports[retriever].write_text(result.stdout, encoding="utf-8")
    drop = invoke("compare", reports["dense"], reports["bm25"], "--fail-if-worse", "ndcg@10")
    assert drop.exit_code == 1 and drop.output.startswith("FAIL ndcg@10 dropped")
    assert "< 0.05 over 53 questions" in drop.output
    rise = invoke("compare", reports["bm25"], reports["dense"], "--fail-if-worse", "ndcg@10")
    assert rise.exit_code == 0 and rise.output.startswith("PASS ndcg@10 did not drop")
    # the sample golden set judges a few documents per question: most of a top 10 is unjudged
    low = invoke("compare", reports["dense"], reports["dense"], "--fail-if-worse", "ndcg@10", "--min-judged", "0.5")
    assert low.exit_code == 1 and low.output.startswith("FAIL judged@10 below --min-judged 0.5: BASE")
