"""`labeler import` / `labeler export`: round trips, formats, and the malformed-file matrix."""
from __future__ import annotations

import json

import pytest
import pytrec_eval
from click.testing import CliRunner

from conftest import SAMPLE, need_datasets, snapshot
from labeler.golden import read_golden
from labeler_edge.cli import cli

CORPUS = "".join(json.dumps({"_id": f"d{i}", "title": f"Doc {i}", "text": f"Text of document {i}."}) + "\n"
                 for i in range(1, 6))
GOOD = (
    '{"query_id": "q1", "question": "What is in doc 1?", "query_type": "lookup", "relevance": {"d1": 3, "d2": 0}, '
    '"annotators": ["asha"], "reviewer": "li"}\n'
    '{"query_id": "q2", "question": "What is on Mars?", "unanswerable": true}\n'
)


def run(*args: str):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result




@pytest.fixture
def setup(tmp_path):
    """A database holding GOOD, a corpus file, and the db path."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(CORPUS, encoding="utf-8")
    good = tmp_path / "good.jsonl"
    good.write_text(GOOD, encoding="utf-8")
    db = tmp_path / "labeler.db"
    result = run("import", good, "--corpus", corpus, "--db", db)
    assert result.exit_code == 0, result.output
    return corpus, db


def test_cli_import_reports_summary_and_uses_labeler_home(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_HOME", str(tmp_path / "home"))
    good = tmp_path / "good.jsonl"
    good.write_text(GOOD, encoding="utf-8")
    result = run("import", good)
    assert result.exit_code == 0, result.output
    assert "Imported 2 questions into 'default': 2 new; 2 grades written, 1 unanswerable." in result.stdout
    assert (tmp_path / "home" / "labeler.db").is_file()


def test_cli_export_import_export_is_byte_identical(tmp_path):
    one, two = tmp_path / "one.db", tmp_path / "two.db"
    assert run("import", SAMPLE / "golden.jsonl", "--corpus", SAMPLE, "--db", one).exit_code == 0
    assert run("export", tmp_path / "a.jsonl", "--db", one).exit_code == 0
    assert run("import", tmp_path / "a.jsonl", "--db", two).exit_code == 0
    assert run("export", tmp_path / "b.jsonl", "--db", two).exit_code == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    # What the project writes passes its own validator, against the corpus too.
    from labeler.corpus import load_corpus

    assert len(read_golden(tmp_path / "a.jsonl", doc_ids=load_corpus(SAMPLE).doc_ids())) == 62


def test_cli_export_trec_loads_in_pytrec_eval(setup, tmp_path):
    _, db = setup
    result = run("export", "--format", "trec", tmp_path / "qrels.txt", "--db", db)
    assert result.exit_code == 0 and "1 question(s) without judged documents" in result.stderr
    with open(tmp_path / "qrels.txt") as f:
        assert pytrec_eval.parse_qrel(f) == {"q1": {"d1": 3, "d2": 0}}


def test_cli_export_beir_reads_back(setup, tmp_path):
    _, db = setup
    assert run("export", "--format", "beir", tmp_path / "beir", "--db", db).exit_code == 0
    back = read_golden(tmp_path / "beir")
    assert back.qrels() == {"q1": {"d1": 3, "d2": 0}, "q2": {}} and back.get("q2").unanswerable


@pytest.mark.parametrize("fmt,out,target", [("jsonl", "g.jsonl", "g.jsonl"), ("trec", "g.qrels", "g.qrels"),
                                            ("beir", "set", "set/qrels/test.tsv")])
def test_cli_export_replaces_no_file_without_force(setup, tmp_path, fmt, out, target):
    # Into a copy of a BEIR dataset it replaced the dataset's queries and qrels, its corpus left beside them.
    _, db = setup
    (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / target).write_text("someone's file\n")
    refused = run("export", "--format", fmt, tmp_path / out, "--db", db)
    assert refused.exit_code == 2 and f"{tmp_path / target}: the file exists" in refused.stderr
    assert "--force" in refused.stderr and (tmp_path / target).read_text() == "someone's file\n"
    assert run("export", "--format", fmt, tmp_path / out, "--db", db, "--force").exit_code == 0
    assert (tmp_path / target).read_text() != "someone's file\n"


def test_cli_export_without_database_or_collection_is_exit_2(setup, tmp_path):
    _, db = setup
    result = run("export", tmp_path / "x.jsonl", "--db", tmp_path / "missing.db")
    assert result.exit_code == 2 and "no labeler database here yet" in result.stderr and "Hint:" in result.stderr
    assert not (tmp_path / "missing.db").exists()
    result = run("export", tmp_path / "x.jsonl", "--db", db, "--collection", "nope")
    assert result.exit_code == 2 and "no collection named 'nope'" in result.stderr


def test_cli_import_collections_are_separate(setup, tmp_path):
    _, db = setup
    good = tmp_path / "good.jsonl"
    assert run("import", good, "--db", db, "--collection", "other").exit_code == 0
    assert run("export", tmp_path / "o.jsonl", "--db", db, "--collection", "other").exit_code == 0
    assert [q.query_id for q in read_golden(tmp_path / "o.jsonl")] == ["q1", "q2"]


def test_cli_import_beir_folder_cranfield_needs_keep_scale(tmp_path):
    folder = need_datasets() / "cranfield"
    db = tmp_path / "labeler.db"
    result = run("import", folder, "--db", db)
    assert result.exit_code == 2
    assert "--keep-scale" in result.stderr and "test.tsv:8: grade 4 for '13' is outside 0-3" in result.stderr
    result = run("import", folder, "--db", db, "--keep-scale")
    assert result.exit_code == 0 and "Imported 225 questions" in result.stdout


def _line(**fields) -> str:
    base = {"query_id": "n1", "question": "New question?"}
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}) + "\n"


HEAD = _line(query_id="ok1", relevance={"d1": 1})  # line 1 is always fine: errors name line 2

MATRIX = {
    "broken-json": (HEAD + '{"query_id": "n1", "question": \n', 2, "broken JSON"),
    "missing-question": (HEAD + _line(question=...), 2, "missing 'question'"),
    "missing-query-id": (HEAD + _line(query_id=...), 2, "missing 'query_id'"),
    "wrong-type-id": (HEAD + _line(query_id=12), 2, "'query_id' must be a string"),
    "wrong-type-relevance": (HEAD + _line(relevance=["d1"]), 2, "'relevance' must be an object"),
    "wrong-type-grade": (HEAD + _line(relevance={"d1": "2"}), 2, "must be an integer 0-3"),
    "boolean-grade": (HEAD + _line(relevance={"d1": True}), 2, "not a boolean"),
    "grade-above-3": (HEAD + _line(relevance={"d1": 4}), 2, "grade 4 for 'd1' is outside 0-3"),
    "grade-below-0": (HEAD + _line(relevance={"d1": -1}), 2, "grade -1 for 'd1' is outside 0-3"),
    "duplicate-id": (HEAD + _line(query_id="ok1"), 2, "duplicate query_id 'ok1' (first on line 1)"),
    "unanswerable-with-relevant": (HEAD + _line(unanswerable=True, relevance={"d2": 2}), 2, "marked unanswerable"),
    "unknown-doc-id": (HEAD + _line(relevance={"ghost": 1}), 2, "doc id 'ghost' not in the corpus"),
    "hash-doc-id": (HEAD + _line(relevance={"#d1": 1}), 2, "doc id '#d1' starts with '#'"),
    "space-query-id": (HEAD + _line(query_id="n 1"), 2, "'query_id' 'n 1' contains whitespace"),
    "nested-100000-deep": (HEAD + "[" * 100_000 + "]" * 100_000 + "\n", 2, "broken JSON: nested too deeply"),
    "grade-beyond-64-bits": (HEAD + _line(relevance={"d1": 2**70}), 2, "does not fit in 64 bits"),
    "empty-file": ("", 1, "the file has no questions"),
    "non-utf8": (None, 2, "not valid UTF-8: byte 0xe9"),
    "50mb-line": (None, 2, "bytes long; the limit is 1,048,576 bytes"),
}


@pytest.mark.parametrize("case", sorted(MATRIX))
def test_cli_import_malformed_file_exits_2_with_line_and_leaves_database_unchanged(case, setup, tmp_path):
    corpus, db = setup
    text, line_no, reason = MATRIX[case]
    bad = tmp_path / f"{case}.jsonl"
    if case == "non-utf8":
        bad.write_bytes(HEAD.encode() + '{"query_id": "n1", "question": "Café?"}\n'.encode("latin-1"))
    elif case == "50mb-line":
        with open(bad, "wb") as f:
            f.write(HEAD.encode())
            f.write(b'{"query_id": "n1", "question": "' + b"x" * (50 * 1024 * 1024) + b'"}\n')
    else:
        bad.write_text(text, encoding="utf-8")
    before = snapshot(db)

    result = run("import", bad, "--corpus", corpus, "--db", db)

    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1, message
    assert message.startswith(f"Error: {bad}:{line_no}: ")
    assert reason in message and "Hint:" in message
    assert result.stdout == ""
    assert snapshot(db) == before


def test_cli_import_keep_scale_grade_beyond_64_bits_exits_2(setup, tmp_path):
    corpus, db = setup
    bad = tmp_path / "huge.jsonl"
    bad.write_text(HEAD + _line(relevance={"d1": 2**70}), encoding="utf-8")
    before = snapshot(db)
    result = run("import", bad, "--corpus", corpus, "--db", db, "--keep-scale")
    assert result.exit_code == 2 and f"{bad}:2: grade {2**70} for 'd1' does not fit in 64 bits" in result.stderr
    assert "Hint:" in result.stderr and snapshot(db) == before


@pytest.mark.parametrize("fmt", ["jsonl", "trec", "beir"])
def test_cli_export_under_a_file_exits_2_with_path_and_hint(setup, tmp_path, fmt):
    _, db = setup
    out = tmp_path / "good.jsonl" / "x"  # good.jsonl is a file, as /etc/passwd is
    result = run("export", "--format", fmt, out, "--db", db)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and str(out) in message
    assert "is a file, not a folder" in message and "Hint:" in message


def test_cli_import_several_bad_lines_lists_each(setup, tmp_path):
    corpus, db = setup
    bad = tmp_path / "bad.jsonl"
    bad.write_text(HEAD + "{\n" + _line(relevance={"d1": 9}) + _line(query_id="x", question=""), encoding="utf-8")
    before = snapshot(db)
    result = run("import", bad, "--corpus", corpus, "--db", db)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 4
    for n, text in zip((2, 3, 4), lines):
        assert f"{bad}:{n}: " in text
    assert lines[-1].startswith("3 bad lines; nothing from the file was used. Hint:")
    assert snapshot(db) == before


def test_cli_import_missing_file_and_bad_corpus_exit_2(setup, tmp_path):
    _, db = setup
    result = run("import", tmp_path / "nope.jsonl", "--db", db)
    assert result.exit_code == 2 and "no such file" in result.stderr
    result = run("import", tmp_path / "good.jsonl", "--corpus", tmp_path / "nocorpus", "--db", db)
    assert result.exit_code == 2 and "Hint:" in result.stderr


def test_cli_help_lists_import_and_export():
    out = run("--help").output
    assert "import" in out and "export" in out


MINE = ('{"query_id": "q1", "question": "How many sick days can I take?", "relevance": {"d4": 2}}\n')


def test_cli_import_dry_run_prints_the_plan_and_writes_nothing(setup, tmp_path):
    corpus, db = setup
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(MINE + '{"query_id": "q2", "question": "What is on Mars?", "unanswerable": true}\n'
                      '{"query_id": "q9", "question": "New?"}\n', encoding="utf-8")
    before = snapshot(db)
    result = run("import", theirs, "--db", db, "--dry-run")
    assert result.exit_code == 0, result.output
    assert ("3 questions for collection 'default': 1 new, 1 identical, 1 conflicting (q1: other text, other type or "
            "notes, other imported grades). Nothing was written (--dry-run).") in result.stdout
    assert ("q1: other text, other type or notes, other imported grades: 'What is in doc 1?' here, "
            "'How many sick days can I take?' in the file") in result.stdout
    assert snapshot(db) == before


def test_cli_import_refuses_conflicts_without_a_choice_in_one_line(setup, tmp_path):
    corpus, db = setup
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(MINE, encoding="utf-8")
    before = snapshot(db)
    result = run("import", theirs, "--db", db)
    assert result.exit_code == 2 and "Traceback" not in result.output
    [line] = result.stderr.strip().splitlines()
    assert "theirs.jsonl: nothing imported: 1 questions for collection 'default': 0 new, 0 identical, 1 conflicting" \
        in line and "Hint: see them with --dry-run, then pass --on-conflict new" in line
    assert snapshot(db) == before


def test_cli_import_on_conflict_new_skip_replace(setup, tmp_path):
    from labeler_edge.cli.golden import ON_CONFLICT
    from labeler_storage import golden_io, open_store

    assert ON_CONFLICT == golden_io.ON_CONFLICT
    corpus, db = setup
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text(MINE, encoding="utf-8")
    assert "1 skipped" in run("import", theirs, "--db", db, "--on-conflict", "skip").stdout
    assert "1 added as new questions (fresh ids)" in run("import", theirs, "--db", db, "--on-conflict", "new").stdout
    with open_store(db) as s:
        assert s.questions.get("q1").question == "What is in doc 1?"
        assert s.questions.get("q-0001").extra["source_id"] == "q1"
    assert "1 replaced" in run("import", theirs, "--db", db, "--on-conflict", "replace").stdout
    with open_store(db) as s:
        q = s.questions.get("q1")
        assert q.question == MINE.split('"question": "')[1].split('"')[0]
        assert [v["text"] for v in q.extra["replaced_versions"]] == ["What is in doc 1?"]
        assert {(e.doc_id, e.grade, e.change) for e in s.judgments.history("q1") if e.replaced_at} == {
            ("d1", 3, "import"), ("d2", 0, "import")}


def test_cli_export_refuses_a_home_path_given_quoted(setup, tmp_path, monkeypatch):
    # "~/g.jsonl" passed quoted (or from a script) reached the writer expanded but the check as it was.
    _, db = setup
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "g.jsonl").write_text("someone's file\n")
    refused = run("export", "~/g.jsonl", "--db", db)
    assert refused.exit_code == 2 and "the file exists" in refused.stderr
    assert (tmp_path / "g.jsonl").read_text() == "someone's file\n"
