"""The CLI's edge: one word for one thing (-k depth, --cutoffs), deprecations, exit 3 for bugs
with a logged traceback, and the scoring commands starting without the heavy extras."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import SAMPLE
from labeler_edge.cli import EXIT_BUG, cli, handle_errors
from test_cli_scoring import SEED_GOLDEN, SEED_RUN

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def seed(tmp_path):
    golden, run = tmp_path / "golden.jsonl", tmp_path / "run.trec"
    golden.write_text(SEED_GOLDEN, encoding="utf-8")
    run.write_text(SEED_RUN, encoding="utf-8")
    return golden, run


@pytest.mark.parametrize("command", ["score", "compare"])
def test_cli_old_k_cutoffs_still_work_with_a_deprecation_note(seed, command):
    golden, run = seed
    args = [str(golden), str(run)] if command == "score" else [str(run), str(run), "--golden", str(golden)]
    result = CliRunner().invoke(cli, [command, *args, "-k", "1,3", "--json"])
    assert result.exit_code == 0, result.stderr
    assert "-k for metric cutoffs is deprecated; use --cutoffs" in result.stderr
    data = json.loads(result.stdout)
    names = set(data["metrics"]) if command == "score" else set(data["metrics"])
    assert "ndcg@3" in names and "ndcg@10" not in names


def test_cli_k_and_cutoffs_together_is_an_error(seed):
    golden, run = seed
    result = CliRunner().invoke(cli, ["score", str(golden), str(run), "-k", "1", "--cutoffs", "3"])
    assert result.exit_code == 2
    assert "both -k and --cutoffs" in result.output


@pytest.mark.parametrize("command", [["eval", str(SAMPLE), str(SAMPLE / "golden.jsonl")],
                                     ["search", str(SAMPLE), "vacation days"]])
def test_cli_depth_given_cutoffs_says_which_option_means_what(command):
    result = CliRunner().invoke(cli, [*command, "-k", "10,100"])
    assert result.exit_code == 2
    assert "-k/--depth is how many documents to retrieve" in result.output
    assert "--cutoffs 10,100" in result.output
    assert "Traceback" not in result.output


def test_cli_unexpected_exception_exits_3_with_one_line_and_a_log(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_HOME", str(tmp_path))

    @cli.command("boom-test")
    @handle_errors
    def boom() -> None:
        raise RuntimeError("wires crossed\nsecond line")

    try:
        result = CliRunner().invoke(cli, ["boom-test"])
    finally:
        cli.commands.pop("boom-test")
    assert result.exit_code == EXIT_BUG
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "unexpected RuntimeError: wires crossed" in lines[0]
    log = tmp_path / "logs" / "errors.log"
    assert str(log) in lines[0]
    assert "Traceback" in log.read_text() and "second line" in log.read_text()


def test_cli_missing_extra_exits_2_with_the_install_line():
    @cli.command("needs-torch-test")
    @handle_errors
    def needs() -> None:
        raise ModuleNotFoundError("No module named 'faiss'", name="faiss")

    try:
        result = CliRunner().invoke(cli, ["needs-torch-test"])
    finally:
        cli.commands.pop("needs-torch-test")
    assert result.exit_code == 2
    assert "pip install 'golden-set-labeler[embed]'" in result.output


# The scoring CLI must work from `pip install golden-set-labeler` alone: block the heavy
# extras at import time and run the commands in a fresh interpreter.
BLOCK = ("import sys\n"
         "for name in ('torch', 'sentence_transformers', 'faiss', 'bm25s', 'streamlit', 'pandas'):\n"
         "    sys.modules[name] = None  # import fails, as when the extra is not installed\n"
         "from labeler_edge.cli import main\n"
         "sys.argv = ['labeler'] + sys.argv[1:]\n"
         "main()\n")


def _run_blocked(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "LABELER_HOME": str(cwd / "home"), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", BLOCK, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


def test_cli_scoring_commands_run_without_torch_faiss_or_streamlit(tmp_path, seed):
    golden, run = seed
    score = _run_blocked("score", str(golden), str(run), "--json", cwd=tmp_path)
    assert score.returncode == 0, score.stderr
    report = tmp_path / "a.json"
    report.write_text(score.stdout)
    assert _run_blocked("compare", str(report), str(report), cwd=tmp_path).returncode == 0
    imported = _run_blocked("import", str(golden), "--db", str(tmp_path / "x.db"), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    exported = _run_blocked("export", str(tmp_path / "out.jsonl"), "--db", str(tmp_path / "x.db"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "out.jsonl").read_text(encoding="utf-8").count("\n") == 3
    needs_embed = _run_blocked("search", str(SAMPLE), "vacation", cwd=tmp_path)
    assert needs_embed.returncode == 2
    assert "golden-set-labeler[embed]" in needs_embed.stderr and "Traceback" not in needs_embed.stderr
