"""`labeler import --count-file-grades / --keep-file-grades-apart` and `labeler sources`: a consensus-only
file's grades kept as that file's, counted only where the user says so."""
from __future__ import annotations

from click.testing import CliRunner

from conftest import snapshot
from labeler_edge.cli import cli
from labeler_storage import open_store

FILE = '{"query_id": "q1", "question": "What is in doc 1?", "relevance": {"d1": 3}}\n'


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_cli_import_keeps_file_grades_apart_and_sources_count_them(tmp_path):
    db, golden = tmp_path / "labeler.db", tmp_path / "vendor.jsonl"
    golden.write_text(FILE)
    preview = run("import", golden, "--db", db, "--dry-run", "--keep-file-grades-apart")
    assert preview.exit_code == 0 and "1 grades of no annotator (a consensus-only file): kept as this file's own, " \
        "kept apart" in preview.output and "(the default)" not in preview.output
    assert "(the default)" in run("import", golden, "--db", db, "--dry-run").output  # counted is the default
    done = run("import", golden, "--db", db, "--keep-file-grades-apart")
    assert done.exit_code == 0 and "The file's grades are kept as (vendor.jsonl, " in done.output
    with open_store(db) as store:
        [source] = store.sources.list()
        assert (source.counted, store.golden.export().get("q1").relevance) == (False, {})
    listed = run("sources", "list", "--db", db)
    assert listed.exit_code == 0 and listed.output.startswith(f"{source.name}: 1 grades on 1 questions, kept apart")
    before = snapshot(db)
    refused = run("sources", "count", "(vendor.jsonl)", "--db", db)
    assert refused.exit_code == 2 and "no grade source named '(vendor.jsonl)'" in refused.output
    assert "Hint: known sources: (vendor.jsonl, " in refused.output and snapshot(db) == before
    counted = run("sources", "count", source.name, "--db", db)
    assert counted.exit_code == 0 and "counted (where no person graded)" in counted.output
    with open_store(db) as store:
        assert store.golden.export().get("q1").relevance == {"d1": 3}
    out = tmp_path / "out.jsonl"
    assert run("export", out, "--db", db).exit_code == 0
    assert '"changes": [{"counted": true, "at": ' in out.read_text()


def test_cli_score_refuses_a_golden_set_whose_only_grades_are_kept_apart(tmp_path):
    db, golden, out, run_file = (tmp_path / n for n in ("labeler.db", "vendor.jsonl", "out.jsonl", "run.trec"))
    golden.write_text(FILE)
    run_file.write_text("q1 Q0 d1 1 1.0 bm25\n")
    assert run("import", golden, "--db", db, "--keep-file-grades-apart").exit_code == 0
    assert run("export", out, "--db", db).exit_code == 0
    refused = run("score", out, run_file)
    assert refused.exit_code == 2 and "nothing to score: the only grades are 1 of imported files kept apart " \
        "((vendor.jsonl, " in refused.output and "Hint: count a source" in refused.output
    assert run("score", golden, run_file).exit_code == 0  # the file itself: its relevance counts
