"""Grade sources (labeler_storage.grade_sources): each consensus-only file's grades kept as that file's,
counted in the consensus only where the user says so, on both engines; the app's use cases over them."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from labeler.errors import AccessDenied, InputError
from labeler.golden import parse_golden_jsonl
from labeler_app import grade_sources as src
from labeler_app.access import Actor, Role
from labeler_app.runs import require_judgments

A = '{"query_id": "a", "question": "A?", "relevance": {"d1": 3, "d2": 2}}\n'
B = '{"query_id": "b", "question": "B?", "relevance": {"d1": 1}, "unanswerable": false}\n'


def statuses(store) -> dict[str, tuple]:
    """query_id -> (status, consensus) as the question index and the full list say (they must agree)."""
    index = {s.query_id: str(s.status) for s in store.questions.index()}
    full = {s.question.query_id: (str(s.status), dict(s.consensus)) for s in store.questions.list()}
    assert {q: st for q, (st, _) in full.items()} == index
    return full


def test_two_files_are_two_sources_and_one_kept_apart_counts_nowhere(store):
    store.clock = lambda: datetime(2026, 12, 2, 6, 0, tzinfo=timezone.utc)
    one = store.golden.import_set(parse_golden_jsonl(A), file_name="upstream.jsonl", by="lead")
    two = store.golden.import_set(parse_golden_jsonl(B), file_name="vendor.jsonl", count_file_grades=False)
    assert (one.source, two.source) == ("(upstream.jsonl, 2026-12-02T06:00:00Z)", "(vendor.jsonl, 2026-12-02T06:00:00Z)")
    assert "kept as (vendor.jsonl, 2026-12-02T06:00:00Z), apart: not counted" in two.line
    assert [(s.file_name, s.imported_by, s.counted, s.n_grades, s.n_questions) for s in store.sources.list()] == [
        ("upstream.jsonl", "lead", True, 2, 1), ("vendor.jsonl", "", False, 1, 1)]
    assert statuses(store) == {"a": ("done", {"d1": 3, "d2": 2}), "b": ("new", {})}
    assert store.golden.export().get("b").relevance == {} and store.judgments.consensus().qrels == {"a": {"d1": 3, "d2": 2}}
    with pytest.raises(InputError):  # nothing but the source apart on b: no labelled question
        require_judgments(parse_golden_jsonl(serialize_only(store, "b")))
    # A person's grade outweighs a counted source; switching the vendor on counts it where no one graded.
    store.judgments.set("a", "d1", 0, annotator="asha")
    store.sources.set_counted(two.source, True, by="lead")
    assert statuses(store) == {"a": ("done", {"d1": 0, "d2": 2}), "b": ("done", {"d1": 1})}
    [switch] = store.sources.list()[1].changes
    assert switch == {"counted": True, "at": "2026-12-02T06:00:00Z", "by": "lead"}
    with pytest.raises(InputError, match=r"no grade source named '\(nope\)'.*Hint: known sources: \(upstream"):
        store.sources.set_counted("(nope)", True)


def serialize_only(store, query_id: str) -> str:
    from labeler.golden import GoldenSet, serialize_golden_jsonl

    return serialize_golden_jsonl(GoldenSet((store.golden.export().get(query_id),)))


def test_a_consensus_only_file_imported_again_is_identical_and_adds_no_source(store):
    store.golden.import_set(parse_golden_jsonl(A), file_name="upstream.jsonl")
    plan = store.golden.plan(parse_golden_jsonl(A))
    assert (plan.identical, plan.conflicts, plan.file_grades) == (("a",), (), 2)
    again = store.golden.import_set(parse_golden_jsonl(A), file_name="upstream.jsonl")
    assert (again.n_identical, again.source) == (1, "") and len(store.sources.list()) == 1


def test_a_source_kept_apart_takes_its_unanswerable_vote_with_it(store):
    mars = '{"query_id": "m", "question": "Mars?", "unanswerable": true}\n'
    done = store.golden.import_set(parse_golden_jsonl(mars), file_name="mars.jsonl", count_file_grades=False)
    assert not store.questions.get("m").unanswerable and statuses(store)["m"][0] == "new"
    store.sources.set_counted(done.source, True)
    assert store.questions.get("m").unanswerable and statuses(store)["m"][0] == "unanswerable"


def test_people_may_not_take_a_sources_name(store):
    with pytest.raises(InputError, match=r"names starting with '\(' are reserved for imported grades"):
        store.judgments.set("a", "d1", 1, annotator="(upstream.jsonl)")


def test_only_admins_switch_a_source_and_a_refusal_changes_nothing(store):
    done = store.golden.import_set(parse_golden_jsonl(A), file_name="upstream.jsonl")
    for role in (Role.VIEWER, Role.ANNOTATOR):
        with pytest.raises(AccessDenied):
            src.set_source_counted(store, Actor("ann@example.org", role, team=True), done.source, False)
    assert store.sources.list()[0].counted
    line = src.set_source_counted(store, Actor("lead@example.org", Role.ADMIN, team=True), done.source, False)
    assert line.startswith(f"{done.source}: kept apart (not counted); 2 grades on 1 questions")
    assert [r["counted"] for r in src.source_rows(store)] == ["kept apart (not counted)"]
