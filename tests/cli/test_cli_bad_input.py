"""Bad corpora and bad places, through the CLI: each is one line, exit 2, and nothing written.
(The golden-file matrix is in test_cli_golden.py; these are the corpus and data-directory cases.)"""
from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from conftest import snapshot
from labeler_edge.cli import cli
from test_cli_golden import CORPUS, GOOD


def _corpus_cases(tmp_path):
    big = tmp_path / "big-cell.csv"
    big.write_text("id,title,text\nd1,One,fine\nd2,Two," + "x" * (csv.field_size_limit() + 10) + "\n")
    deep = tmp_path / "deep.jsonl"
    deep.write_text(json.dumps({"_id": "d1", "text": "fine"}) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text(json.dumps({"_id": "d1", "text": "a"}) + "\n" + json.dumps({"_id": "d 2", "text": "b"}) + "\n")
    return {"csv-cell-over-field-limit": (big, 3, "cell is longer"), "json-nested-100000-deep": (deep, 2, "nested too deep"),
            "doc-id-with-a-space": (spaced, 2, "contains whitespace")}


@pytest.mark.parametrize("case", ["csv-cell-over-field-limit", "json-nested-100000-deep", "doc-id-with-a-space"])
def test_cli_import_against_a_bad_corpus_is_one_line_and_changes_nothing(tmp_path, case):
    golden = tmp_path / "good.jsonl"
    golden.write_text(GOOD)
    corpus, line, reason = _corpus_cases(tmp_path)[case]
    db = tmp_path / "labeler.db"
    good_corpus = tmp_path / "corpus.jsonl"
    good_corpus.write_text(CORPUS)
    assert CliRunner().invoke(cli, ["import", str(golden), "--corpus", str(good_corpus), "--db", str(db)]).exit_code == 0
    before = snapshot(db)
    result = CliRunner().invoke(cli, ["import", str(golden), "--corpus", str(corpus), "--db", str(db)])
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and f"{corpus}:{line}" in message and reason in message.lower()
    assert "Hint:" in message and "Traceback" not in result.output
    assert snapshot(db) == before


def test_cli_search_a_corpus_without_an_indexable_word_exits_2(tmp_path):
    corpus = tmp_path / "stopwords.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": "the of and ... !"}) + "\n" for i in range(3)))
    result = CliRunner().invoke(cli, ["search", str(corpus), "anything", "--retriever", "bm25"])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and str(corpus) in result.stderr and "Hint:" in result.stderr


@pytest.mark.parametrize("where", ["missing-parent", "parent-is-a-file", "home-under-a-file"])
def test_cli_a_bad_database_place_is_one_line_and_creates_nothing(tmp_path, monkeypatch, where):
    golden = tmp_path / "good.jsonl"
    golden.write_text(GOOD)
    args = ["import", str(golden)]
    if where == "missing-parent":
        db = tmp_path / "no-such-folder" / "labeler.db"
        args += ["--db", str(db)]
    elif where == "parent-is-a-file":
        db = golden / "labeler.db"
        args += ["--db", str(db)]
    else:
        db = golden / "home" / "labeler.db"
        monkeypatch.setenv("LABELER_HOME", str(golden / "home"))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Hint:" in message and "Traceback" not in result.output
    assert str(db.parent) in message or str(db) in message
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no folder, no empty database


# Found by probing the CLI with generated inputs: each was an exit 3, a hang, a traceback or a
# refused command that still wrote; each is now one line, exit 2, nothing written.

def _report(tmp_path, change) -> str:
    from test_cli_scoring import SEED_GOLDEN, SEED_RUN

    golden, run = tmp_path / "g.jsonl", tmp_path / "r.trec"
    golden.write_text(SEED_GOLDEN)
    run.write_text(SEED_RUN)
    data = json.loads(CliRunner().invoke(cli, ["score", str(golden), str(run), "--json"]).stdout)
    change(data)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data).replace('"__NaN__"', "NaN"))
    return str(path)


REPORT_DAMAGE = {
    "per-query-entry-a-string": lambda d: d["per_query"].update(q1="x"),
    "per-query-entry-null": lambda d: d["per_query"].update(q1=None),
    "ci95-a-list": lambda d: d.update(ci95=[1, 2]),
    "abstention-a-list": lambda d: d.update(abstention=[1]),
    "per-type-a-list": lambda d: d.update(per_type=[1]),
    "value-beyond-float": lambda d: d["per_query"]["q1"].update({"ndcg@10": 10**400}),
    "nan-value": lambda d: d["per_query"]["q1"].update({"ndcg@10": "__NaN__"}),
}


@pytest.mark.parametrize("damage", sorted(REPORT_DAMAGE))
def test_cli_compare_a_damaged_saved_report_exits_2(tmp_path, damage):
    (tmp_path / "a").mkdir()
    good = _report(tmp_path / "a", lambda d: None)
    bad = _report(tmp_path, REPORT_DAMAGE[damage])
    result = CliRunner().invoke(cli, ["compare", good, bad, "--json"])
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and bad in result.stderr and "Hint:" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_cli_compare_a_pipe_or_device_is_refused_not_read(tmp_path, kind):
    import os

    target = "/dev/zero" if kind == "device" else str(tmp_path / "f")
    if kind == "fifo":
        os.mkfifo(target)
    result = CliRunner().invoke(cli, ["compare", target, target])
    assert result.exit_code == 2 and "not a regular file" in result.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e309"])
def test_cli_score_a_threshold_that_is_not_finite_exits_2(tmp_path, value):
    from test_cli_scoring import SEED_GOLDEN, SEED_RUN

    golden, run = tmp_path / "g.jsonl", tmp_path / "r.trec"
    golden.write_text(SEED_GOLDEN)
    run.write_text(SEED_RUN)
    result = CliRunner().invoke(cli, ["score", str(golden), str(run), "--json", "--abstain-threshold", value])
    assert result.exit_code == 2 and "not a finite number" in result.stderr


def _db_with_questions(tmp_path):
    golden = tmp_path / "good.jsonl"
    golden.write_text(GOOD)
    db = tmp_path / "labeler.db"
    assert CliRunner().invoke(cli, ["import", str(golden), "--db", str(db)]).exit_code == 0
    return golden, db


@pytest.mark.parametrize("case", ["db-symlink-loop", "export-to-empty-path", "collection-not-utf8",
                                  "someone-elses-database", "click-usage-error", "unreadable-regular-file"])
def test_cli_probe_findings_are_one_line_exit_2(tmp_path, case):
    import os
    import sqlite3

    golden, db = _db_with_questions(tmp_path)
    foreign = tmp_path / "other.db"
    sqlite3.connect(foreign).execute("CREATE TABLE foo (x)").connection.close()
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    args = {
        "db-symlink-loop": ["import", str(golden), "--db", str(loop)],
        "export-to-empty-path": ["export", "", "--db", str(db)],
        "collection-not-utf8": ["import", str(golden), "--db", str(db), "--collection", "c\udc80"],
        "someone-elses-database": ["export", str(tmp_path / "o.jsonl"), "--db", str(foreign)],
        "click-usage-error": ["export", "o", "--format", "xml"],
        "unreadable-regular-file": ["score", "/proc/self/mem", str(golden)],
    }[case]
    before = snapshot(db), snapshot(foreign)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Hint:" in lines[0] and "Traceback" not in result.output, result.output
    assert (snapshot(db), snapshot(foreign)) == before


# Commands that would score nothing (every metric 0) refuse instead, naming the counts and the
# flag that scores anyway; `export` refuses a missing folder as `--db` does.

def _seed(tmp_path):
    from test_cli_scoring import SEED_GOLDEN, SEED_RUN

    golden, run = tmp_path / "g.jsonl", tmp_path / "r.trec"
    golden.write_text(SEED_GOLDEN)
    run.write_text(SEED_RUN)
    return golden, run


def _one_line_exit_2(result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Hint:" in lines[0] and "Traceback" not in result.output, result.output
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


def test_cli_score_a_run_sharing_no_question_exits_2_unless_allowed(tmp_path):
    golden, run = _seed(tmp_path)
    other = tmp_path / "other.trec"  # the same rankings under other question ids: made for another golden set
    other.write_text(run.read_text().replace("q", "x"))
    result = CliRunner().invoke(cli, ["score", str(golden), str(other)])
    _one_line_exit_2(result, str(other), "shares no question", "ranks 3 questions", "has 3", "--allow-missing")
    assert result.stdout == ""
    allowed = CliRunner().invoke(cli, ["score", str(golden), str(other), "--allow-missing", "--json"])
    assert allowed.exit_code == 0 and json.loads(allowed.stdout)["counts"]["missing_from_run"] == 3


def test_cli_compare_runs_sharing_no_question_with_the_golden_set_exits_2(tmp_path):
    golden, run = _seed(tmp_path)
    other = tmp_path / "other.trec"
    other.write_text(run.read_text().replace("q", "x"))
    _one_line_exit_2(CliRunner().invoke(cli, ["compare", str(run), str(other), "--golden", str(golden)]),
                     str(other), "shares no question")


def test_cli_eval_a_golden_set_for_another_corpus_exits_2_and_writes_nothing(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(CORPUS)  # d1..d5
    golden = tmp_path / "other-corpus.jsonl"  # 9 of its 10 judged documents are not in the corpus
    golden.write_text("".join(json.dumps({"query_id": f"q{i}", "question": f"Doc {i}?",
                                          "relevance": {f"x{i}": 1, f"y{i}": 0, **({"d1": 1} if i == 1 else {})}})
                              + "\n" for i in range(1, 5)) + json.dumps({"query_id": "q5", "question": "Doc?",
                                                                          "relevance": {"x5": 1}}) + "\n")
    saved = tmp_path / "run.trec"
    args = ["eval", str(corpus), str(golden), "--retriever", "bm25", "--save-run", str(saved)]
    before = sorted(p.name for p in tmp_path.iterdir())
    _one_line_exit_2(CliRunner().invoke(cli, args), str(golden), "9 of 10 judged documents", "5 questions",
                     "--allow-missing")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no run file, no index built
    allowed = CliRunner().invoke(cli, [*args, "--allow-missing"])
    assert allowed.exit_code == 0, allowed.output
    assert "9 of 10 judged documents stale" in allowed.stderr and saved.exists()
    # 8 of 10 missing is below the refusal line (90%): scored, with the stale warning
    golden.write_text(golden.read_text().replace('"x2": 1', '"d2": 1'))
    scored = CliRunner().invoke(cli, ["eval", str(corpus), str(golden), "--retriever", "bm25"])
    assert scored.exit_code == 0 and "8 of 10 judged documents stale" in scored.stderr, scored.output


def test_cli_score_a_saved_json_report_says_what_it_is(tmp_path):
    golden, run = _seed(tmp_path)
    report = tmp_path / "report.json"
    report.write_text(CliRunner().invoke(cli, ["score", str(golden), str(run), "--json"]).stdout)
    _one_line_exit_2(CliRunner().invoke(cli, ["score", str(golden), str(report)]), str(report),
                     "this is JSON", "not a TREC run file", "labeler compare")


@pytest.mark.parametrize("fmt", ["jsonl", "trec", "beir"])
def test_cli_export_into_a_missing_folder_exits_2_and_creates_nothing(tmp_path, fmt):
    _, db = _db_with_questions(tmp_path)
    out = tmp_path / "no-such-dir" / "deeper" / "out.jsonl"
    before = snapshot(db)
    _one_line_exit_2(CliRunner().invoke(cli, ["export", str(out), "--format", fmt, "--db", str(db)]),
                     str(out.parent), "does not exist", "mkdir -p")
    assert not (tmp_path / "no-such-dir").exists() and snapshot(db) == before
