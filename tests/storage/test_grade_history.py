"""Grade history: a regrade, a clear or a re-import keeps the grade it replaces in judgment_history
(who, when, what change); `store.judgments.history` shows current and replaced grades in order.
Deleting a question deletes its history with it (ON DELETE CASCADE): history is about the
grades of questions that exist, and a deleted question leaves nothing behind. On SQLite and PostgreSQL."""
from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import event

from labeler_app.access import Actor, Role
from conftest import rows, sqlite_only
from labeler.golden import GoldenQuery, GoldenSet
from labeler_app.golden_set import grade_history_rows
from labeler_app.label import grade
from labeler_storage import open_store


class Ticking:
    """A store clock that moves one minute per reading, so every write has its own time."""

    def __init__(self) -> None:
        self.at = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.at += timedelta(minutes=1)
        return self.at


@pytest.fixture
def store(db_url):
    s = open_store(db_url, synchronous="NORMAL")
    s.clock = Ticking()  # the store's one clock (storage/clock.py)
    s.questions.add("How many vacation days?", query_id="q1", author="ann")
    yield s
    s.close()


def history_rows(store) -> list[tuple]:
    return rows(store, "SELECT doc_id, annotator, grade, note, change, replaced_by FROM judgment_history ORDER BY id")


def events(store, qid: str = "q1") -> list[tuple]:
    return [(e.doc_id, e.annotator, e.grade, e.change or "current") for e in store.judgments.history(qid)]


def golden(*queries: tuple[str, dict[str, int]]) -> GoldenSet:
    return GoldenSet(tuple(GoldenQuery(qid, f"Question {qid}?", relevance=rel) for qid, rel in queries))


def test_regrade_keeps_the_previous_grade_with_who_and_when(store):
    store.judgments.set("q1", "d1", 1, annotator="ann", note="only partly")
    first = store.judgments.list(query_id="q1")[0]
    store.judgments.set("q1", "d1", 3, annotator="ann")
    [old, current] = store.judgments.history("q1")
    assert (old.grade, old.note, old.annotator, old.change, old.replaced_by) == (1, "only partly", "ann",
                                                                               "regraded", "ann")
    assert old.given_at == first.updated_at and old.replaced_at > old.given_at
    assert (current.grade, current.replaced_at, current.change) == (3, None, "")
    assert current.given_at == old.replaced_at  # the regrade's time


def test_the_same_grade_again_adds_no_history(store):
    store.judgments.set("q1", "d1", 2, annotator="ann", note="n")
    store.judgments.set("q1", "d1", 2, annotator="ann", note="n")
    assert history_rows(store) == []
    store.judgments.set("q1", "d1", 2, annotator="ann", note="another reason")  # a changed note is a change
    assert history_rows(store) == [("d1", "ann", 2, "n", "regraded", "ann")]


def test_other_annotators_grades_are_separate(store):
    store.judgments.set("q1", "d1", 2, annotator="ann")
    store.judgments.set("q1", "d1", 0, annotator="bob")  # bob's first grade replaces nothing
    assert history_rows(store) == []


def test_clear_records_cleared(store):
    store.judgments.set("q1", "d1", 2, annotator="ann")
    assert store.judgments.clear("q1", "d1", annotator="ann")
    assert history_rows(store) == [("d1", "ann", 2, "", "cleared", "ann")]
    assert events(store) == [("d1", "ann", 2, "cleared")]
    assert not store.judgments.clear("q1", "d1", annotator="ann")  # nothing left: no second row
    assert len(history_rows(store)) == 1


def test_grade_history_is_current_plus_replaced_by_document_then_time(store):
    store.judgments.set("q1", "d2", 1, annotator="ann")
    store.judgments.set("q1", "d1", 0, annotator="ann")
    store.judgments.set("q1", "d1", 2, annotator="bob")
    store.judgments.set("q1", "d1", 1, annotator="ann")
    store.judgments.set("q1", "d1", 3, annotator="ann")
    store.judgments.clear("q1", "d2", annotator="ann")
    store.judgments.set("q1", "d2", 2, annotator="ann")
    assert events(store) == [
        ("d1", "ann", 0, "regraded"),  # given 09:03, replaced 09:05
        ("d1", "bob", 2, "current"),   # given 09:04
        ("d1", "ann", 1, "regraded"),  # given 09:05, replaced 09:06
        ("d1", "ann", 3, "current"),   # given 09:06
        ("d2", "ann", 1, "cleared"),
        ("d2", "ann", 2, "current"),
    ]


def test_grade_history_in_one_second_keeps_the_order_of_the_writes(store, monkeypatch):
    store.clock = lambda: datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
    for g in (1, 2, 3, 0, 2):
        store.judgments.set("q1", "d1", g, annotator="ann")
    assert [e.grade for e in store.judgments.history("q1")] == [1, 2, 3, 0, 2]


def test_grade_history_of_a_question_without_grades_is_empty_and_of_none_an_error(store):
    assert store.judgments.history("q1") == []
    from labeler.errors import InputError

    with pytest.raises(InputError, match="no question 'nope'"):
        store.judgments.history("nope")


def test_app_grade_is_recorded_under_the_actor_and_shown_by_grade_history_rows(store):
    ann = Actor("ann@example.org", Role.ANNOTATOR, team=True)
    grade(store, ann, "q1", "d1", 1)
    grade(store, ann, "q1", "d1", 2)
    grade(store, ann, "q1", "d1", None)
    grade(store, ann, "q1", "d1", 3)
    rows = grade_history_rows(store, "q1")
    assert [(r["grade"], r["by"], r["change"]) for r in rows] == [
        (1, "ann@example.org", "regraded"), (2, "ann@example.org", "cleared"), (3, "", "")]
    assert rows[-1]["replaced"] == "(current)" and rows[0]["replaced"] == rows[1]["given"]
    assert set(rows[0]) == {"doc_id", "annotator", "grade", "given", "replaced", "by", "change", "note"}


def test_reimport_replacing_records_every_replaced_grade_as_import(store, monkeypatch):
    store.clock = Ticking()
    store.golden.import_set(golden(("g1", {"d1": 2, "d2": 1, "d3": 0}), ("g2", {"d1": 1})))
    store.judgments.set("g1", "d1", 3, annotator="ann")  # a person's grade on an imported question
    assert history_rows(store) == []
    # g1 conflicts (ann's grade, other imported grades), g2 is identical, g3 new: replacing g1 makes it the file's.
    store.golden.import_set(golden(("g1", {"d1": 2, "d2": 3, "d4": 1}), ("g2", {"d1": 1}), ("g3", {"d9": 2})),
                        on_conflict="replace")
    first, second = (s.name for s in store.sources.list())  # each file's grades are its own source
    assert sorted(history_rows(store)) == [("d1", first, 2, "", "import", first),
                                           ("d1", "ann", 3, "", "import", "ann"),
                                           ("d2", first, 1, "", "import", first),
                                           ("d3", first, 0, "", "import", first)]
    [d2_old, d2_new] = [e for e in store.judgments.history("g1") if e.doc_id == "d2"]
    assert d2_old.replaced_at == d2_new.given_at > d2_old.given_at  # replaced when the new file's grade came
    assert {(j.doc_id, j.annotator, j.grade) for j in store.judgments.list(query_id="g1")} == {
        ("d1", second, 2), ("d2", second, 3), ("d4", second, 1)}
    assert [e for e in store.judgments.history("g2") if e.replaced_at] == []


def test_reimporting_the_same_file_adds_no_history(store):
    g = golden(("g1", {"d1": 2, "d2": 1}))
    store.golden.import_set(g)
    store.golden.import_set(g)
    assert history_rows(store) == []


@sqlite_only
def test_reimport_history_of_many_changed_grades_is_complete_under_sqlites_default_limit(store):
    # 12,000 changed grades: one IN (...) of (question, doc, annotator) tuples would need 36,000
    # variables, past SQLite's default limit of 32,766 (this build allows more, so it is set here).
    @event.listens_for(store.engine, "connect")
    def _limit(dbapi_conn, _record):
        dbapi_conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 32766)

    store.engine.dispose()
    docs = [f"d{i}" for i in range(600)]
    store.golden.import_set(golden(*((f"g{q}", {d: 1 for d in docs}) for q in range(20))))
    store.golden.import_set(golden(*((f"g{q}", {d: 2 for d in docs}) for q in range(20))), on_conflict="replace")
    con = sqlite3.connect(store.engine.url.database)
    assert con.execute("SELECT count(*), min(grade), max(grade) FROM judgment_history "
                       "WHERE change = 'import'").fetchone() == (12000, 1, 1)
    con.close()


def test_deleting_a_question_deletes_its_history(store):
    store.questions.add("Another?", query_id="q2")
    for qid in ("q1", "q2"):
        store.judgments.set(qid, "d1", 1, annotator="ann")
        store.judgments.set(qid, "d1", 2, annotator="ann")
    assert len(history_rows(store)) == 2
    assert store.questions.delete("q1")
    qids = rows(store, "SELECT q.query_id FROM judgment_history h JOIN questions q ON q.id = h.question_id")
    assert qids == [("q2",)] and rows(store, "SELECT count(*) FROM judgment_history") == [(1,)]
    assert events(store, "q2") == [("d1", "ann", 1, "regraded"), ("d1", "ann", 2, "current")]


def test_deleting_the_collection_deletes_the_history(store):
    store.judgments.set("q1", "d1", 1, annotator="ann")
    store.judgments.set("q1", "d1", 2, annotator="ann")
    assert store.collections.delete("default")
    assert history_rows(store) == []
