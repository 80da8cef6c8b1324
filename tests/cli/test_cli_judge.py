"""`labeler judge COLLECTION --judge NAME_OR_FILE --holes-from RUN`: an OpenAI-compatible judge (the real
rule server of tests/openai_support.py on localhost, not a language model) grades a saved run's holes
into the machine-grade table: resumable (an interrupted run goes on where it stopped, no pair graded
twice), failures listed and never a 0, the judgments untouched; bad input one line, exit 2. On SQLite
and PostgreSQL."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from conftest import SAMPLE, import_demo, snapshot
from labeler.corpus import load_corpus
from labeler.judges import make_judge
from labeler.judges.spec import read_judge_spec
from labeler_app.judge_runs import collection_calibration, hole_pairs, judge_pairs
from labeler_edge.cli import cli
from openai_support import overlap_grade, rule_server
from labeler_storage import CollectionStore, open_store

N_HOLES = 3  # per question: the run's top 5 is two judged documents and three nobody judged


@pytest.fixture
def labelled(db_url):
    """The demo golden set on the sample corpus and a saved run whose top 5 has N_HOLES holes per question
    (on SQLite and on PostgreSQL)."""
    db = db_url
    corpus = load_corpus(SAMPLE)
    with open_store(db) as s:
        import_demo(s)
        per_query = {}
        for status in s.questions.list()[:4]:
            judged = [j.doc_id for j in status.judgments][:2]
            holes = [d.doc_id for d in corpus.documents if d.doc_id not in {j.doc_id for j in status.judgments}]
            top = [*judged, *holes[:N_HOLES]]
            per_query[status.question.query_id] = {"top_k": [{"doc_id": d, "score": 1 - r / 10, "grade": None}
                                                             for r, d in enumerate(top)]}
        run = s.runs.save({"model": "m"}, summary={"metrics": {}}, per_query=per_query, golden_hash="g").run_id
    return db, run, corpus


def _declaration(tmp_path, server, name="rule", **extra):
    path = tmp_path / f"{name}.toml"
    more = "".join(f"{k} = {v}\n" for k, v in extra.items())
    path.write_text(f'kind = "openai"\nmodel = "rule-1"\nurl = "{server.url}"\nbackoff = 0.0\nconcurrency = 1\n{more}')
    return path


def _judge(db, *args):
    return CliRunner().invoke(cli, ["judge", "default", "--db", str(db), *args])


def test_cli_judge_grades_the_holes_once_and_resumes_where_it_stopped(labelled, tmp_path):
    db, run, corpus = labelled
    with open_store(db) as s:
        judgments = sorted((j.query_id, j.doc_id, j.grade, j.annotator) for j in s.judgments.list())
    with rule_server() as server:
        declared = _declaration(tmp_path, server)
        first = _judge(db, "--judge", str(declared), "--holes-from", str(run), "--limit", "5")
        assert first.exit_code == 0, first.output
        assert "judge rule: 5 pairs graded, 0 already graded (left), 0 failed" in first.output
        rest = _judge(db, "--judge", str(declared), "--holes-from", f"#{run}")
        assert rest.exit_code == 0, rest.output
        total = 4 * N_HOLES
        assert f"{total - 5} pairs graded, 5 already graded (left)" in rest.output
        again = _judge(db, "--judge", str(declared), "--holes-from", str(run))
        assert "0 pairs graded, 12 already graded (left)" in again.output
        asked = [r["json"]["messages"][-1]["content"] for r in server.requests]
    assert len(asked) == len(set(asked)) == total  # no pair was sent twice
    with open_store(db) as s:
        grades = s.machine.grades()
        questions = {q.question.query_id: q.question.question for q in s.questions.list()}
        assert sorted((j.query_id, j.doc_id, j.grade, j.annotator) for j in s.judgments.list()) == judgments
    assert len(grades) == total and {g.judge for g in grades} == {"rule"}
    for g in grades:  # the rule's grade of what the judge was shown, against the document's current content
        doc = corpus.get(g.doc_id)
        assert g.grade == overlap_grade(questions[g.query_id], doc.title + "\n" + doc.text)
        assert (g.doc_hash, g.model, g.stale) == (doc.content_hash, "rule-1", False)


def test_an_interrupted_judge_keeps_what_it_graded_and_the_next_run_grades_only_the_rest(labelled, tmp_path):
    db, run, corpus = labelled
    with rule_server() as server, open_store(db) as opened:
        store = CollectionStore(opened, "default")
        spec = read_judge_spec(_declaration(tmp_path, server))
        pairs, _ = hole_pairs(store, run, corpus)

        def stop_at_five(done, total, stage):
            if done == 5:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt), make_judge(spec) as judge:
            judge_pairs(store, judge, spec, pairs, progress=stop_at_five)
        kept = {(g.query_id, g.doc_id) for g in store.machine.grades()}
        assert len(kept) == 4  # the four answers before the interruption were saved
        sent_before = len(server.requests)
        with make_judge(spec) as judge:
            done = judge_pairs(store, judge, spec, pairs)
        assert (done.asked, done.saved, done.skipped) == (len(pairs) - 4, len(pairs) - 4, 4)
        resent = [r["json"]["messages"][-1]["content"] for r in server.requests[sent_before:]]
        assert len(resent) == len(pairs) - 4
        assert len({(g.query_id, g.doc_id) for g in store.machine.grades()}) == len(pairs)


def test_cli_judge_lists_failures_and_never_grades_them_0(labelled, tmp_path):
    db, run, _ = labelled
    with rule_server() as server:
        declared = _declaration(tmp_path, server, retries=0)
        server.script = ["no_grade", "out_of_scale", "malformed"]
        result = _judge(db, "--judge", str(declared), "--holes-from", str(run))
        assert result.exit_code == 0, result.output
        assert f"{4 * N_HOLES - 3} pairs graded, 0 already graded (left), 3 failed" in result.output
        assert result.output.count("  failed ") == 3 and "run the command again to retry them" in result.output
        with open_store(db) as s:
            assert len(s.machine.grades()) == 4 * N_HOLES - 3
        retried = _judge(db, "--judge", str(declared), "--holes-from", str(run))
        assert "3 pairs graded" in retried.output
    with open_store(db) as s:
        assert len(s.machine.grades()) == 4 * N_HOLES


def test_cli_judge_judged_grades_the_pairs_people_graded_for_the_calibration(labelled, tmp_path):
    db, run, corpus = labelled
    with rule_server() as server:
        declared = _declaration(tmp_path, server)
        result = _judge(db, "--judge", str(declared), "--judged")
    assert result.exit_code == 0, result.output
    with open_store(db) as s:
        golden = s.golden.export()
        human = {(q.query_id, d): g for q in golden.queries if not q.unanswerable for d, g in q.relevance.items()}
        cal = collection_calibration(CollectionStore(s, "default"), read_judge_spec(declared), bootstrap=0)
    assert f"judge rule: {len(human)} pairs graded" in result.output and "the pairs people graded" in result.output
    assert cal.calibration.pairs == len(human)
    rows = [sum(row) for row in cal.calibration.confusion]  # row g: the pairs people graded g
    assert rows == [sum(1 for g in human.values() if g == grade) for grade in range(4)]
    assert cal.machine == {(g.query_id, g.doc_id): overlap_grade(golden_q[g.query_id], _shown(corpus, g.doc_id))
                           for g in _grades(db) for golden_q in [{q.query_id: q.question for q in golden.queries}]}


def _shown(corpus, doc_id):
    doc = corpus.get(doc_id)
    return doc.title + "\n" + doc.text


def _grades(db):
    with open_store(db) as s:
        return s.machine.grades()


def _save_judge(db, tmp_path, server) -> None:
    """The rule server's judge saved in the database as "saved-rule" (as the Judges page saves one)."""
    spec = read_judge_spec(_declaration(tmp_path, server, name="saved-rule"))
    with open_store(db) as s:
        s.machine.save_judge(spec.name, spec.to_dict(), by="boss")


def test_cli_judge_finds_a_judge_saved_by_name(labelled, tmp_path):
    db, run, _ = labelled
    with rule_server() as server:
        _save_judge(db, tmp_path, server)
        result = _judge(db, "--judge", "saved-rule", "--holes-from", str(run), "--limit", "2")
    assert result.exit_code == 0, result.output
    assert "judge saved-rule: 2 pairs graded" in result.output


@pytest.mark.parametrize("args, message", [
    (["--judge", "nobody", "--holes-from", "1"], "neither a declaration file (.toml/.json) nor a saved judge"),
    (["--judge", "x", "--holes-from", "three"], "is not a saved run's id"),
    (["--judge", "{decl}", "--holes-from", "999"], "no saved run with id 999"),
    (["--judge", "{decl}", "--holes-from", "{other}"], "is a run of collection 'other', not of 'default'"),
    (["--judge", "{decl}", "--holes-from", "1", "--limit", "0"], "--limit"),
    (["--judge", "{decl}", "--holes-from", "1", "--judged"], "give either --holes-from RUN"),
    (["--judge", "{decl}"], "give either --holes-from RUN"),
])
def test_cli_judge_bad_input_is_one_line_exit_2_and_changes_nothing(labelled, tmp_path, args, message):
    db, run, _ = labelled
    with open_store(db) as s:
        s.questions.add("Elsewhere?", collection="other")
        other = s.runs.save({"model": "m"}, summary={}, per_query={}, golden_hash="g", collection="other").run_id
    before = snapshot(db)
    with rule_server() as server:
        declared = _declaration(tmp_path, server)
        args = [a.format(decl=declared, other=other) for a in args]
        result = _judge(db, *args)
        assert server.requests == []
    assert result.exit_code == 2, result.output
    assert message in result.output and "Hint:" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert snapshot(db) == before


def test_cli_calibrate_a_collection_against_a_judge_saved_by_name(labelled, tmp_path):
    import json

    from sklearn.metrics import cohen_kappa_score

    db, run, _ = labelled
    with rule_server() as server:
        _save_judge(db, tmp_path, server)
        assert _judge(db, "--judge", "saved-rule", "--judged").exit_code == 0
    result = CliRunner().invoke(cli, ["calibrate", "default", "--judge", "saved-rule", "--db", str(db), "--json",
                                      "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    with open_store(db) as s:
        golden = s.golden.export()
        machine = {(g.query_id, g.doc_id): g.grade for g in s.machine.grades(judge="saved-rule")}
    human = {(q.query_id, d): g for q in golden.queries if not q.unanswerable for d, g in q.relevance.items()}
    pairs = sorted(human)
    assert got["pairs"] == len(pairs) == len(machine)
    assert got["kappa"] == pytest.approx(cohen_kappa_score([human[p] for p in pairs], [machine[p] for p in pairs]))
    # the team's bars held against it, as the Judges page does: word overlap on the demo set is refused
    assert got["gate"]["passes"] is False and got["gate"]["reasons"], got["gate"]
    text = CliRunner().invoke(cli, ["calibrate", "default", "--judge", "saved-rule", "--db", str(db), "--bootstrap", "0"])
    assert "gate (the team's bars, with the collection's saved runs): below the team's bars" in text.output
    # a file judge against the collection's people reads the same as ever; an unknown collection is one line
    qrels = tmp_path / "judge.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in machine.items()))
    by_file = CliRunner().invoke(cli, ["calibrate", "default", "--judge", str(qrels), "--db", str(db), "--json",
                                       "--bootstrap", "0"])
    assert json.loads(by_file.output)["kappa"] == got["kappa"] and json.loads(by_file.output)["gate"] is None
    missing = CliRunner().invoke(cli, ["calibrate", "nowhere", "--judge", "saved-rule", "--db", str(db)])
    assert missing.exit_code == 2 and "neither a golden file nor a collection" in missing.output
    assert "Hint:" in missing.output and len(missing.output.strip().splitlines()) == 1


def test_cli_judge_grades_again_for_a_new_prompt_or_an_edited_document_and_never_for_the_same(labelled, tmp_path):
    """"Each pair judged once per judge/prompt/content": the key is all three, not the pair alone."""
    import json

    db, run, corpus = labelled
    total = 4 * N_HOLES
    with rule_server() as server:
        first = _judge(db, "--judge", str(_declaration(tmp_path, server)), "--holes-from", str(run))
        assert f"judge rule: {total} pairs graded, 0 already graded" in first.output
        other = _declaration(tmp_path, server, name="reworded", prompt='"Q: {question} D: {title} {text}"')
        other.write_text('name = "rule"\n' + other.read_text())  # the same judge, a new prompt
        reworded = _judge(db, "--judge", str(other), "--holes-from", str(run))
        assert f"judge rule: {total} pairs graded, 0 already graded" in reworded.output, reworded.output
        with open_store(db) as s:
            grades = s.machine.grades(judge="rule")
            hole = grades[0].doc_id
        assert len(grades) == 2 * total and len({g.prompt_hash for g in grades}) == 2
        n = sum(g.doc_id == hole for g in grades) // 2  # the questions where that document is a hole
        edited = tmp_path / "corpus.jsonl"  # the corpus with one judged hole's text changed
        lines = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines() if line.strip()]
        for doc in lines:
            if doc["_id"] == hole:
                doc["text"] += " Edited since."
        edited.write_text("".join(json.dumps(doc) + "\n" for doc in lines))
        again = _judge(db, "--judge", str(other), "--holes-from", str(run), "--corpus", str(edited))
        assert f"judge rule: {n} pairs graded, {total - n} already graded" in again.output, again.output
        same = _judge(db, "--judge", str(other), "--holes-from", str(run), "--corpus", str(edited))
        assert f"judge rule: 0 pairs graded, {total} already graded" in same.output, same.output
        assert len(server.requests) == 2 * total + n
