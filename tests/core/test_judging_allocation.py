"""Judgments spread over the questions by what each still finds: every question its first `floor`, then
visits to the question whose last visit found the most; totals and budgets held; no peeking."""
from __future__ import annotations

import pytest

from judging_support import VOCABULARY, write_collection, write_qrels
from labeler.errors import ConfigError
from labeler.judging.allocation import run_allocated, visit_yield
from labeler.judging.collection import open_collection
from labeler.judging.run import simulate_collection
from labeler.judging.simulate import Oracle


class ListOrder:
    """A fixed order standing in for the active one (run_allocated asks only for `next`)."""

    def __init__(self, docs):
        self.docs = docs

    def next(self, judged):
        return next((d for d in self.docs if d not in judged), None)


def test_visit_yield_by_hand():
    assert visit_yield(0, 0, floor=4, visit=2) == 2.0
    assert visit_yield(2, 1, floor=4, visit=2) == 1.5  # under the floor: above any share
    assert visit_yield(4, 2, floor=4, visit=2) == pytest.approx(3 / 4)  # (2 + 1) / (2 + 2)
    assert visit_yield(4, 0, floor=4, visit=2) == pytest.approx(1 / 4)


def test_run_allocated_floor_then_the_richer_question():
    docs = {q: [f"{q}{i}" for i in range(30)] for q in ("rich", "poor", "none")}
    qrels = {"rich": {d: 1 for d in docs["rich"][::2]}, "poor": {docs["poor"][0]: 1}, "none": {}}
    runs = run_allocated({q: ListOrder(d) for q, d in docs.items()}, {q: Oracle(qrels[q]) for q in docs},
                         total=20, budget=30, floor=4, visit=2)
    counts = {q: len(r.judged) for q, r in runs.items()}
    assert sum(counts.values()) == 20 and min(counts.values()) >= 4
    assert counts == {"rich": 12, "poor": 4, "none": 4}  # past the floor every visit went where half were relevant
    assert all(r.judged == docs[q][:counts[q]] for q, r in runs.items())  # each in its own order


def test_run_allocated_holds_the_budget_and_ends_when_orders_run_out():
    docs = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3", "b4", "b5", "b6"]}
    orders = {q: ListOrder(d) for q, d in docs.items()}
    runs = run_allocated(orders, {q: Oracle({d: 1 for d in d_}) for q, d_ in docs.items()}, total=100, budget=5,
                         floor=2, visit=2)
    assert [len(runs["a"].judged), len(runs["b"].judged)] == [3, 5]


@pytest.fixture
def collection(tmp_path, fake_encoder_factory):
    folder = tmp_path / "tiny"
    return folder, write_collection(folder), fake_encoder_factory(VOCABULARY)


def _allocated(folder, encoder, **kw):
    return simulate_collection(folder, "active", collection=open_collection(folder, embedder=encoder),
                               allocate=True, **kw)


def test_simulate_allocated_spends_the_pool_total_and_cannot_peek(collection):
    folder, qrels, encoder = collection
    first = _allocated(folder, encoder, budget=30)
    judged = {q: v["judged"] for q, v in first["questions"].items()}
    assert sum(map(len, judged.values())) == first["summary"]["pool"]["judgments"] == first["summary"]["allocation"]["total"]
    assert first["summary"]["allocation"]["relevant_found"] == sum(
        sum(qrels[q].get(d, 0) >= 1 for d in order) for q, order in judged.items())
    changed = {q: {**{d: g for d, g in j.items() if d in judged[q]},
                   **{d: 0 if g else 1 for d, g in j.items() if d not in judged[q]}} for q, j in qrels.items()}
    write_qrels(folder, changed)
    assert {q: v["judged"] for q, v in _allocated(folder, encoder, budget=30)["questions"].items()} == judged


@pytest.mark.parametrize("strategy,kw", [("pool", {"allocate": True}), ("active", {"total": 100}),
                                         ("pool", {"total": 100, "allocate": True})])
def test_simulate_refuses_allocation_where_it_would_not_run_it(tmp_path, strategy, kw):
    with pytest.raises(ConfigError, match="go with --strategy active"):  # the JSON would name a strategy it did not run
        simulate_collection(tmp_path, strategy, **kw)
