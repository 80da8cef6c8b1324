"""The question index computed in SQL agrees with the Python consensus (labeler.agreement), on SQLite
and on PostgreSQL (conftest's `store`)."""
from __future__ import annotations

import random

import pytest
import sqlalchemy as sa

from labeler.errors import InputError

from labeler.agreement import consensus
from labeler.golden import GoldenQuery, GoldenSet
from labeler.status import Status, status_of
from labeler_storage import IMPORT_ANNOTATOR
from labeler_storage import schema as S
from labeler_storage.questions import write_judgments

PEOPLE = ("asha", "ben", "chen", "dana")


def _generate(rng: random.Random, n_questions: int) -> dict[str, dict]:
    """Questions with random annotators and grades; imported grades may be negative (a kept scale)."""
    cases = {}
    for i in range(n_questions):
        ratings: dict[str, dict[str, int]] = {}
        for d in range(rng.randint(0, 4)):
            graders = {p: rng.randint(0, 3) for p in rng.sample(PEOPLE, rng.randint(0, len(PEOPLE)))}
            if rng.random() < 0.5:
                graders[IMPORT_ANNOTATOR] = rng.randint(-2, 4)
            if graders:
                ratings[f"d{d}"] = graders
        nothing_relevant = all(g < 1 for by in ratings.values() for g in by.values())
        # An adjudicator's final grade now and then: of a judged document, or of one nobody graded.
        adjudicated = {d: rng.randint(0, 3) for d in [*ratings, "d9"] if rng.random() < 0.15}
        cases[f"q{i:03d}"] = {"ratings": ratings, "unanswerable": nothing_relevant and rng.random() < 0.3,
                              "adjudicated": adjudicated}
    return cases


def _load(store, cases: dict[str, dict]) -> None:
    store.golden.import_set(GoldenSet(tuple(
        GoldenQuery(qid, f"Question {qid}?", unanswerable=case["unanswerable"],
                    relevance={d: by[IMPORT_ANNOTATOR] for d, by in case["ratings"].items() if IMPORT_ANNOTATOR in by})
        for qid, case in cases.items())))
    # People's grades through the store's one judgment writer, in bulk: the subject here is the
    # index's arithmetic (set_judgment's checks are tested in test_storage.py).
    with store.engine.begin() as conn:
        ids = dict(conn.execute(sa.select(S.questions.c.query_id, S.questions.c.id)).all())
        write_judgments(conn, [
            dict(question_id=ids[qid], doc_id=doc_id, grade=grade, annotator=person, note="",
                 created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
            for qid, case in cases.items() for doc_id, by in case["ratings"].items()
            for person, grade in by.items() if person != IMPORT_ANNOTATOR])
    for qid, case in cases.items():
        for doc_id, grade in case.get("adjudicated", {}).items():
            store.judgments.adjudicate(qid, doc_id, grade, by="boss")


def _expected(qid: str, case: dict) -> tuple:
    ratings = {(qid, d): by for d, by in case["ratings"].items()}
    grades = consensus(ratings, stand_in=IMPORT_ANNOTATOR).qrels.get(qid, {})
    people = sorted({p for by in case["ratings"].values() for p in by} - {IMPORT_ANNOTATOR})
    final = {**grades, **case.get("adjudicated", {})}  # as the export reads them
    return qid, status_of(case["unanswerable"], final), len(grades), tuple(people), dict(grades)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_question_index_matches_python_consensus_on_generated_cases(store, seed):
    cases = _generate(random.Random(seed), 300)
    _load(store, cases)
    expected = [_expected(qid, case) for qid, case in cases.items()]
    index = store.questions.index(with_annotators=True)
    assert [(s.query_id, s.status, s.n_judged, s.annotators) for s in index] == [e[:4] for e in expected]
    # The generator reaches every status and the tie rule's both sides.
    assert {s.status for s in index} == set(Status)
    # The export holds exactly the questions the index calls complete (adjudications included).
    complete = [s.query_id for s in index if s.status.complete]
    assert [q.query_id for q in store.golden.export(complete_only=True).queries] == complete
    assert [s.status for s in store.questions.list()] == [s.status for s in index]
    for qid, status, n_judged, _, grades in expected[::10]:
        one = store.questions.status(qid)
        assert (one.status, one.n_judged, dict(one.consensus)) == (status, n_judged, grades)


@pytest.mark.parametrize("grades, status", [
    # floor(median) of an even count is floor of the two middle grades' mean:
    ({"asha": 0, "ben": 2}, Status.DONE),              # (0 + 2) // 2 = 1
    ({"asha": 0, "ben": 1}, Status.STARTED),           # (0 + 1) // 2 = 0
    ({"asha": -1, "ben": 2}, Status.STARTED),  # (-1 + 2) // 2 = 0: "smallest >= 1 is >= 2" is not enough
    ({"asha": -1, "ben": 3}, Status.DONE),   # (-1 + 3) // 2 = 1 (a kept scale: a file's annotations)
    ({IMPORT_ANNOTATOR: 3, "ben": 0}, Status.STARTED),  # an imported grade counts only where no one graded
    ({"asha": 0, "ben": 1, "chen": 1}, Status.DONE),   # median 1
    ({"asha": 0, "ben": 0, "chen": 3}, Status.STARTED),  # median 0
    ({"asha": 1, "ben": 0, "chen": 0, "dana": 3}, Status.STARTED),  # (0 + 1) // 2 = 0
    ({"asha": 2, "ben": 0, "chen": 0, "dana": 3}, Status.DONE),     # (0 + 2) // 2 = 1
])
def test_question_index_tie_rule_by_hand(store, grades, status):
    _load(store, {"q": {"ratings": {"d": grades}, "unanswerable": False}})
    [summary] = store.questions.index(with_annotators=True)
    assert summary.status == status == store.questions.status("q").status


def test_question_index_of_empty_and_missing_collections(store):
    store.collections.ensure("empty")
    assert store.questions.index(collection="empty") == []
    with pytest.raises(InputError, match="no collection named 'nope'.*Hint:"):
        store.questions.index(collection="nope")


@pytest.mark.parametrize("seed", [0, 1])
def test_the_held_index_recomputes_what_changed_and_agrees_with_a_fresh_one(store, db_url, seed):
    """The Store keeps its index between calls and recomputes only touched questions; after every
    write — by this Store or by another one on the same database (another process) — it equals
    the index computed from nothing."""
    from labeler_storage import open_store
    from labeler_storage.question_index import question_index

    rng = random.Random(seed)
    cases = _generate(rng, 40)
    _load(store, cases)
    other = open_store(db_url, synchronous="NORMAL")
    qids = list(cases)
    try:
        for step in range(160):
            writer = rng.choice((store, other))
            qid, doc, who = rng.choice(qids), f"d{rng.randint(0, 5)}", rng.choice(PEOPLE)
            op = rng.randrange(9)
            try:
                if op <= 2:
                    writer.judgments.set(qid, doc, rng.randint(0, 3), annotator=who)
                elif op == 3:
                    writer.judgments.clear(qid, doc, annotator=who)
                elif op == 4:
                    writer.questions.set_unanswerable(qid, rng.random() < 0.7, by=who)
                elif op == 5:
                    writer.judgments.adjudicate(qid, doc, rng.choice((None, 0, 2)), by="boss")
                elif op == 6:
                    writer.questions.edit(qid, text=f"Edited {step}?", query_type=rng.choice(("a", "b")))
                elif op == 7 and len(qids) > 5:
                    writer.questions.delete(qids.pop(rng.randrange(len(qids))))
                else:
                    qids.append(writer.questions.add(f"New {step}?", unanswerable=rng.random() < 0.2).query_id)
            except InputError:
                continue  # a refused write (a relevant grade on a question this annotator voted unanswerable)
            for with_annotators in (False, True):
                with store.engine.connect() as conn:
                    fresh = question_index(conn, collection="default", with_annotators=with_annotators)
                assert store.questions.index(with_annotators=with_annotators) == fresh, (step, op)
    finally:
        other.close()


def test_a_collection_deleted_and_made_again_is_indexed_afresh(store):
    from labeler_storage.question_index import question_index

    store.questions.add("Old one?", query_id="q1", collection="c")
    store.judgments.set("q1", "d1", 3, annotator="asha", collection="c")
    assert [s.status for s in store.questions.index(collection="c")] == [Status.DONE]
    store.collections.delete("c")
    store.questions.add("New one?", query_id="q1", collection="c")  # same name, maybe the same row ids
    with store.engine.connect() as conn:
        fresh = question_index(conn, collection="c")
    assert store.questions.index(collection="c") == fresh and fresh[0].status == Status.NEW
