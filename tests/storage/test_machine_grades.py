"""Machine grades kept apart (issue 23, item 2), on SQLite and PostgreSQL: their own table, once per
(judge, prompt, content), stale when the document changes, never in `relevance` or the judgments;
`export --with-machine` writes them under their own field and an import keeps them apart; saved
judges; the v14 -> v15 adoption."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from conftest import SAMPLE, rows, snapshot
from labeler.corpus import Corpus, load_corpus
from labeler.errors import InputError
from labeler.golden import parse_golden_jsonl, serialize_golden_jsonl
from labeler_app.judge_runs import machine_pairs as current_grades
from labeler_storage import open_store
from labeler_storage import migrations as M
from labeler_storage.machine_grades import MACHINE_FIELD


def _grade(query_id, doc_id, grade, *, judge="umbrela", prompt_hash="p1", doc_hash="h", raw=None, rationale=None):
    return dict(query_id=query_id, doc_id=doc_id, grade=grade, judge=judge, model="m-7b", prompt_hash=prompt_hash,
                params={"temperature": 0}, doc_hash=doc_hash, raw=raw if raw is not None else f"##final score: {grade}",
                rationale=rationale, at="2026-12-02T03:00:00Z")


def _labelled(store):
    corpus = load_corpus(SAMPLE)
    store.collections.ensure(corpus=corpus, corpus_path=str(SAMPLE))
    q = store.questions.add("How many vacation days do I get?", query_id="q-1").query_id
    store.judgments.set(q, "leave-001", 3, annotator="asha", doc=corpus.get("leave-001"))
    return corpus, q


def test_machine_grades_never_enter_judgments_consensus_or_relevance(store):
    corpus, q = _labelled(store)
    h = corpus.get("leave-002").content_hash
    assert store.machine.save_grades([_grade(q, "leave-001", 0, doc_hash=corpus.get("leave-001").content_hash),
                                      _grade(q, "leave-002", 2, doc_hash=h)]) == 2
    assert [(j.doc_id, j.grade, j.annotator) for j in store.judgments.list()] == [("leave-001", 3, "asha")]
    assert store.judgments.consensus().qrels == {q: {"leave-001": 3}}
    golden = store.golden.export()
    assert golden.queries[0].relevance == {"leave-001": 3}
    assert MACHINE_FIELD not in golden.queries[0].extra  # only when asked
    assert [(i.query_id, i.n_judged) for i in store.questions.index()] == [(q, 1)]
    machine = store.golden.export(with_machine=True).queries[0]
    assert machine.relevance == {"leave-001": 3}
    assert [(m["doc_id"], m["grade"], m["judge"], m["model"], m["prompt_hash"], m["doc_hash"])
            for m in machine.extra[MACHINE_FIELD]] == [
        ("leave-001", 0, "umbrela", "m-7b", "p1", corpus.get("leave-001").content_hash),
        ("leave-002", 2, "umbrela", "m-7b", "p1", h)]


def test_machine_grades_a_pair_once_per_judge_prompt_and_content(store):
    corpus, q = _labelled(store)
    h = corpus.get("leave-002").content_hash
    assert store.machine.save_grades([_grade(q, "leave-002", 2, doc_hash=h)]) == 1
    # the same pair, judge, prompt and content again (a resumed run): nothing new, the first answer kept
    assert store.machine.save_grades([_grade(q, "leave-002", 0, doc_hash=h, raw="other")]) == 0
    assert store.machine.save_grades([_grade(q, "leave-002", 1, doc_hash=h, prompt_hash="p2"),  # another prompt
                                      _grade(q, "leave-002", 1, doc_hash=h, judge="other")]) == 2  # another judge
    assert [(g.judge, g.prompt_hash, g.grade) for g in store.machine.grades(judge="umbrela")] == [
        ("umbrela", "p1", 2), ("umbrela", "p2", 1)]
    assert [(c.judge, c.grades, c.stale, c.questions) for c in store.machine.counts()] == [
        ("other", 1, 0, 1), ("umbrela", 2, 0, 1)]


def test_machine_grades_refuse_a_grade_off_the_scale_and_an_unknown_question(store):
    _labelled(store)
    before = snapshot(store)
    for bad in (_grade("q-1", "leave-002", 4), _grade("q-1", "leave-002", True), _grade("nope", "leave-002", 1),
                _grade("q-1", "leave-002", 1, judge="")):
        with pytest.raises(InputError):
            store.machine.save_grades([_grade("q-1", "leave-003", 1), bad])  # all or nothing
    assert snapshot(store) == before


def test_machine_grade_of_an_edited_document_is_stale_and_not_used(store):
    corpus, q = _labelled(store)
    grades = [_grade(q, d, 2, doc_hash=corpus.get(d).content_hash) for d in ("leave-002", "leave-003")]
    store.machine.save_grades([*grades, _grade(q, "leave-005", 1, doc_hash="")])  # content not known
    assert current_grades(store.machine.grades()) == {(q, "leave-002"): 2, (q, "leave-003"): 2}
    store.collections.ensure(corpus=_edited(corpus, "leave-002"), corpus_path=str(SAMPLE))
    found = {g.doc_id: g.stale for g in store.machine.grades()}
    assert found == {"leave-002": True, "leave-003": False, "leave-005": True}
    assert current_grades(store.machine.grades()) == {(q, "leave-003"): 2}
    assert [(c.grades, c.stale) for c in store.machine.counts()] == [(3, 2)]


def _edited(corpus, doc_id):
    """The corpus with one document's text changed (a new corpus version)."""
    return Corpus(tuple(replace(d, text=d.text + " Edited.") if d.doc_id == doc_id else d for d in corpus.documents),
                  corpus.source)


def test_export_with_machine_round_trips_and_import_keeps_them_apart(store, tmp_path):
    corpus, q = _labelled(store)
    store.machine.save_grades([_grade(q, "leave-001", 1, doc_hash=corpus.get("leave-001").content_hash),
                               _grade(q, "leave-009", 3, doc_hash=corpus.get("leave-009").content_hash,
                                      rationale="says 25 days")])
    text = serialize_golden_jsonl(store.golden.export(with_machine=True))
    assert json.loads(text)["relevance"] == {"leave-001": 3}
    golden = parse_golden_jsonl(text)
    store.golden.import_set(golden, collection="copy")
    assert store.golden.export(collection="copy", with_machine=True) == store.golden.export(with_machine=True)
    assert [(j.doc_id, j.grade, j.annotator) for j in store.judgments.list(collection="copy")] == [
        ("leave-001", 3, "asha")]
    assert store.judgments.consensus(collection="copy").qrels == {q: {"leave-001": 3}}
    copied = store.machine.grades(collection="copy")
    assert [(g.doc_id, g.grade, g.rationale) for g in copied] == [("leave-001", 1, None), ("leave-009", 3, "says 25 days")]
    assert store.questions.get(q, collection="copy").extra == {}  # not kept as an unknown field
    store.golden.import_set(golden, collection="copy")  # identical again: nothing doubles
    assert len(store.machine.grades(collection="copy")) == 2


def test_import_refuses_a_malformed_machine_field_and_writes_nothing(store):
    before = snapshot(store)
    line = {"query_id": "q-1", "question": "Q?", "relevance": {"d1": 1}, MACHINE_FIELD: [{"doc_id": "d1", "grade": 7,
                                                                                        "judge": "j"}]}
    with pytest.raises(InputError, match="machine grade 7"):
        store.golden.import_set(parse_golden_jsonl(json.dumps(line) + "\n"))
    with pytest.raises(InputError, match="must be a list"):
        store.golden.import_set(parse_golden_jsonl(json.dumps({**line, MACHINE_FIELD: {"d1": 1}}) + "\n"))
    assert snapshot(store) == before


def test_cli_export_with_machine_writes_them_under_their_own_field(tmp_path):
    from labeler_edge.cli import cli

    db = tmp_path / "labeler.db"
    with open_store(db) as s:
        corpus, q = _labelled(s)
        s.machine.save_grades([_grade(q, "leave-002", 2, doc_hash=corpus.get("leave-002").content_hash)])
    out = tmp_path / "golden.jsonl"
    result = CliRunner().invoke(cli, ["export", str(out), "--db", str(db), "--with-machine"])
    assert result.exit_code == 0, result.output
    line = json.loads(out.read_text())
    assert line["relevance"] == {"leave-001": 3}
    assert [(m["doc_id"], m["grade"], m["judge"]) for m in line[MACHINE_FIELD]] == [("leave-002", 2, "umbrela")]
    plain = CliRunner().invoke(cli, ["export", str(tmp_path / "plain.jsonl"), "--db", str(db)])
    assert plain.exit_code == 0 and MACHINE_FIELD not in (tmp_path / "plain.jsonl").read_text()
    refused = CliRunner().invoke(cli, ["export", str(tmp_path / "g.qrels"), "--db", str(db), "--format", "trec",
                                       "--with-machine"])
    assert refused.exit_code == 2 and "Hint:" in refused.output and not (tmp_path / "g.qrels").exists()


def test_saved_judges_keep_their_declaration_by_name(store):
    store.machine.save_judge("umbrela", {"kind": "openai", "model": "m", "params": {"headers": {"Authorization": "${KEY}"}}},
                     by="boss")
    store.machine.save_judge("umbrela", {"kind": "openai", "model": "m2"}, by="boss")
    assert store.machine.judge_specs() == {"umbrela": {"kind": "openai", "model": "m2"}}
    with pytest.raises(InputError):
        store.machine.save_judge("bad name/", {"kind": "file"})
    assert store.machine.delete_judge("umbrela") and store.machine.judge_specs() == {}


def test_v15_adopts_a_v14_database_with_data_intact(empty_db_url):
    from labeler_storage.engine import Database

    db = Database(empty_db_url)
    with db.write() as conn:
        assert M.upgrade(conn, 14) == list(range(1, 15))
        conn.execute(sa.text("INSERT INTO collections (name, created_at) VALUES ('c', 't')"))
        conn.execute(sa.text("INSERT INTO questions (collection_id, query_id, text, created_at, updated_at) "
                             "SELECT id, 'q-1', 'Q?', 't', 't' FROM collections"))
        conn.execute(sa.text("INSERT INTO judgments (question_id, doc_id, grade, annotator, created_at, updated_at) "
                             "SELECT id, 'd1', 2, 'asha', 't', 't' FROM questions"))
    db.close()
    with open_store(empty_db_url) as s:
        assert s.schema_version() == M.LATEST_VERSION >= 15
        assert [(j.doc_id, j.grade) for j in s.judgments.list(collection="c")] == [("d1", 2)]
        assert s.machine.grades(collection="c") == [] and s.machine.judge_specs() == {}
        assert s.machine.save_grades([_grade("q-1", "d1", 1)], collection="c") == 1
    assert rows(empty_db_url, "SELECT doc_id, grade, judge FROM machine_grades") == [("d1", 1, "umbrela")]
