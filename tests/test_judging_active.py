"""ActiveOrder: one model for the candidates' order and for "find more", refitted on each grade."""
from __future__ import annotations

from judging_support import VOCABULARY, write_collection
from labeler.judging import ActiveOrder
from labeler.judging.collection import open_collection


def test_active_order_of_candidates_is_the_corpus_order_restricted(tmp_path, fake_encoder_factory):
    folder = tmp_path / "tiny"
    write_collection(folder)
    col = open_collection(folder, embedder=fake_encoder_factory(VOCABULARY))
    model = ActiveOrder(col.features("q1"), seed="q1")
    judged = {"vol-00": 2, "gla-00": 0}
    whole = model.order(judged)
    pool = col.pools["q1"]
    assert model.order(judged, pool) == [d for d in whole if d in pool]
    assert not set(judged) & set(whole) and len(whole) == len(col.text.doc_ids) - 2
    more = model.find_more(judged, pool, n=5)
    assert more == [d for d in whole if d not in pool][:5]


def test_active_order_learns_from_a_grade(tmp_path, fake_encoder_factory):
    # vol-04..11 share none of the question's words ("lava and magma"), only "eruption crater";
    # once vol-04 is graded relevant, the other documents with those words come first.
    folder = tmp_path / "tiny"
    write_collection(folder)
    col = open_collection(folder, embedder=fake_encoder_factory(VOCABULARY))
    model = ActiveOrder(col.features("q1"), seed="q1")
    judged = {f"vol-0{i}": 2 if i < 2 else 1 for i in range(4)}
    before = model.order(judged)[:8]
    after = model.order({**judged, "vol-04": 1})[:7]
    deep = {f"vol-{i:02d}" for i in range(5, 12)}
    assert len(deep & set(before)) <= 2 and len(deep & set(after)) >= 6, (before, after)
