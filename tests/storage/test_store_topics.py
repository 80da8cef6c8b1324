"""The Store is a thin object: its lifecycle, and one sub-facade per topic (labeler_storage.topics)."""
from __future__ import annotations

from datetime import datetime, timezone

from labeler_storage import CollectionStore, Store, open_store

TOPICS = {"questions", "judgments", "queue", "runs", "machine", "collections", "golden", "accounts"}


def test_store_holds_only_its_lifecycle_and_its_topics(tmp_path):
    methods = {name for name in dir(Store) if not name.startswith("_") and callable(getattr(Store, name))}
    assert methods == {"close", "migrate", "schema_version"}  # no forwarding of the old flat names
    with open_store(tmp_path / "labeler.db") as store:
        assert TOPICS <= set(vars(store)) and store.clock is not None


def test_store_topics_share_the_store_clock(tmp_path):
    with open_store(tmp_path / "labeler.db") as store:
        store.clock = lambda: datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
        qid = store.questions.add("Vacation days?").query_id
        store.judgments.set(qid, "d1", 2, annotator="asha")
        free = store.questions.add("Hotel limit?").query_id
        assert store.queue.next("ben") == free  # the first has its judge (overlap 1)
        assert store.queue.claim_expiry(free, "ben") == "2026-12-01T09:30:00Z"  # 30 minutes from the store's clock
        assert [e.given_at for e in store.judgments.history(qid)] == ["2026-12-01T09:00:00Z"]


def test_store_topics_of_a_bound_store_act_on_its_collection(tmp_path):
    with open_store(tmp_path / "labeler.db") as store:
        other = CollectionStore(store, "other")
        qid = other.questions.add("Hotel limit?").query_id
        other.judgments.set(qid, "d1", 3, annotator="asha")
        assert store.collections.get() is None  # nothing went to the default collection
        assert [s.question.question for s in store.questions.list(collection="other")] == ["Hotel limit?"]
        assert [j.grade for j in other.judgments.list()] == [3] and other.collections.revision() > 0
        assert list(other.golden.export().questions()) == [qid]
        assert other.questions.get(qid, collection="default") is None  # a call may still name another collection
