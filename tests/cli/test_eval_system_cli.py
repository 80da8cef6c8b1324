"""`labeler eval CORPUS GOLDEN --system module:function` through the real CLI: a system that fails on
some questions has each listed with its error in the text report and counted in --json; options of
the built-in pipeline are refused rather than ignored; --abstain-threshold and --save-run apply."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from labeler.paths import SAMPLE_CORPUS
from labeler.runfile import read_run
from labeler_edge.cli import cli

GOLDEN = SAMPLE_CORPUS / "golden.jsonl"
SYSTEM = '''
def search(question, k):
    """Fails on every question about vacation; otherwise two fixed documents."""
    if "vacation" in question.lower():
        raise TimeoutError("the index did not answer")
    return [("leave-001", 0.9), ("travel-001", 0.4)][:k]
'''


@pytest.fixture
def system(tmp_path, monkeypatch):
    (tmp_path / "labeler_flaky_system.py").write_text(SYSTEM, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "labeler_flaky_system:search"


def eval_(*args):
    return CliRunner().invoke(cli, ["eval", str(SAMPLE_CORPUS), str(GOLDEN), *map(str, args)], catch_exceptions=False)


def vacation_questions() -> list[str]:
    return [q["query_id"] for q in map(json.loads, GOLDEN.read_text(encoding="utf-8").splitlines())
            if "vacation" in q["question"].lower()]


def test_every_failed_question_is_listed_in_the_report_and_counted(system):
    failed = vacation_questions()
    assert len(failed) >= 2
    text = eval_("--system", system)
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert f"{len(failed)} questions failed and were not scored (left out of every mean, not counted as misses):" \
        in lines
    for q in failed:
        assert any(line.startswith(f"  {q}  exception: ") and "the index did not answer" in line for line in lines), q
    data = json.loads(eval_("--system", system, "--json").stdout)
    assert data["counts"]["failed"] == len(failed) and data["counts"]["questions"] == 62
    assert sorted(data["settings"]["failed"]) == sorted(failed)
    assert not set(failed) & set(data["per_query"])


@pytest.mark.parametrize("args, named", [
    (["--retriever", "bm25", "--index", "hnsw"], "--index, --retriever set up the built-in pipeline"),
    (["--hybrid"], "--hybrid sets up the built-in pipeline"),
    (["--chunking", "window"], "--chunking sets up the built-in pipeline"),
])
def test_pipeline_options_with_a_system_are_refused_not_ignored(system, args, named):
    result = eval_("--system", system, *args)
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert named in result.output and f"--system {system} retrieves on its own" in result.output


def test_abstention_threshold_and_saved_run_apply_to_a_system(system, tmp_path):
    out = tmp_path / "flaky.trec"
    data = json.loads(eval_("--system", system, "--json", "--abstain-threshold", "0.95", "--save-run", out).stdout)
    assert data["abstention"]["threshold"] == 0.95  # every answered top score (0.9) is below: all abstain
    assert data["abstention"]["at_threshold"] is not None
    tags = {line.split()[-1] for line in out.read_text(encoding="utf-8").splitlines()}
    assert tags == {"python-labeler_flaky_system:search"}
    assert len(read_run(out)) == 62 - len(vacation_questions())
