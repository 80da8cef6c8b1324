"""The judging simulator's core: the active order cannot peek, finds what the pool misses, and its
summary is recomputed from the judged orders alone."""
from __future__ import annotations

import pytest

from judging_support import VOCABULARY, write_collection, write_qrels
from labeler.judging.collection import open_collection
from labeler.judging.run import simulate_collection
from labeler.judging.summary import judgments_to_reach, recall_curve, tau_curve


@pytest.fixture
def collection(tmp_path, fake_encoder_factory):
    folder = tmp_path / "tiny"
    qrels = write_collection(folder)
    return folder, qrels, fake_encoder_factory(VOCABULARY)


def _active(folder, encoder, **kw):
    col = open_collection(folder, embedder=encoder)
    return simulate_collection(folder, "active", collection=col, **kw)


def test_simulate_active_cannot_peek_at_unasked_grades(collection):
    folder, qrels, encoder = collection
    first = _active(folder, encoder, budget=15, stop_sample=5, patience=3)
    # Change every grade the first run never asked for: relevant becomes not relevant and back.
    changed = {}
    for qid, judged in qrels.items():
        asked = set(first["questions"][qid]["judged"])
        changed[qid] = {d: g for d, g in judged.items() if d in asked}
        changed[qid].update({d: 0 if g else 1 for d, g in judged.items() if d not in asked})
        assert asked != set(judged)  # some grades really did change
    write_qrels(folder, changed)
    second = _active(folder, encoder, budget=15, stop_sample=5, patience=3)
    assert {q: v["judged"] for q, v in second["questions"].items()} == \
        {q: v["judged"] for q, v in first["questions"].items()}


def test_simulate_active_reaches_beyond_the_pool(collection):
    folder, qrels, encoder = collection
    col = open_collection(folder, embedder=encoder)
    pool = simulate_collection(folder, "pool", collection=col)
    active = simulate_collection(folder, "active", collection=col, budget=20, stop_sample=0)
    # The pool is the app's own: dense top 10 + BM25 top 10 in the Label page's order.
    assert {q: v["judged"] for q, v in pool["questions"].items()} == col.pools
    outside = sum(len({d for d, g in qrels[q].items() if g} & set(v["judged"]) - set(col.pools[q]))
                  for q, v in active["questions"].items())
    assert outside > 0
    assert active["summary"]["pool"]["relevant_found_within_pool_budget"] >= pool["summary"]["relevant_found"]


def test_simulate_stops_when_the_sample_bounds_the_rest(collection):
    folder, _, encoder = collection
    result = _active(folder, encoder, budget=60, stop_sample=60, patience=3)
    stopped = [v for v in result["questions"].values() if v["stopped_at"] is not None]
    assert stopped and all(v["estimate"]["upper"] <= 1 for v in stopped)
    assert all(len(v["judged"]) == v["stopped_at"] for v in stopped)
    stopping = result["summary"]["stopping"]
    assert stopping["done_and_at_most_one_left"] == stopping["done"] == len(stopped)


def test_summary_curve_by_hand():
    qrels = {"a": {"x": 1, "y": 1, "z": 0}, "b": {"u": 2}}
    judged = {"a": ["z", "x", "y"], "b": ["u"]}
    # budget 1: a judges z (0), b judges u (1) -> 2 judgments, 1 found; budget 2: +x -> 3, 2; budget 3: +y -> 4, 3.
    curve = recall_curve(judged, qrels)
    assert [(p["judgments"], p["relevant_found"]) for p in curve] == [(2, 1), (3, 2), (4, 3)]
    assert judgments_to_reach(curve, 0.5 * 3) == 3 and judgments_to_reach(curve, 4) is None


def test_summary_tau_on_partial_judgments():
    qrels = {"a": {"x": 1, "y": 1}, "b": {"u": 1}}
    runs = {"good": {"a": {"x": 2.0, "y": 1.0}, "b": {"u": 1.0}},
            "half": {"a": {"x": 1.0, "n": 2.0}, "b": {"u": 1.0}},
            "bad": {"a": {"n": 1.0}, "b": {"m": 1.0}}}
    judged = {"a": ["y", "x"], "b": ["u"]}
    points = tau_curve(judged, qrels, runs, [1, 2])
    # Full qrels: good 1.0 > half > bad 0 -> tau 1 once everything is judged.
    assert points[-1]["tau"] == 1.0 and points[-1]["judgments"] == 3
    # After one judgment each only y (a) and u (b) count: half ranks y nowhere, so it still scores
    # 0.5 (b) over bad's 0, and the order is already right.
    assert points[0]["ndcg@10"]["bad"] == 0.0 and points[0]["tau"] == 1.0


def test_summary_judgments_to_reach_each_question_by_hand():
    from labeler.judging.summary import judgments_to_reach_each

    qrels = {"a": {"x": 1, "y": 1, "z": 0, "w": 1}, "b": {"u": 2}, "c": {"v": 1}}
    judged = {"a": ["z", "x", "w", "y"], "b": ["m", "u"], "c": ["n"]}
    # a needs 2 relevant: z (0), x (1), w (2) -> 3 judgments; b needs 1: m, u -> 2; c needs 0 -> 0.
    assert judgments_to_reach_each(judged, qrels, {"a": 2, "b": 1, "c": 0}) == {"judgments": 5, "not_reached": 0}
    # c needs 1 and its order ends without it: its 1 judgment counts, and it is reported.
    assert judgments_to_reach_each(judged, qrels, {"a": 2, "b": 1, "c": 1}) == {"judgments": 6, "not_reached": 1}


def test_simulate_stops_on_the_gain_curve_where_a_small_sample_cannot(collection):
    folder, _, encoder = collection
    result = _active(folder, encoder, budget=60, stop_sample=3, patience=3)
    by_model = [v for v in result["questions"].values()
                if v["stopped_at"] is not None and v["estimate"]["upper"] > 1]
    assert by_model and all(v["model_estimate"]["upper"] <= 1 for v in by_model)
    # It claims only after three checks in a row said "<= 1 left", and a question whose last
    # check said so alone judged on.
    assert all(v["model_confirmed"] and v["model_checks"][-3:] == [True] * 3 for v in by_model)
    going = [v for v in result["questions"].values() if v["stopped_at"] is None and v["model_checks"]]
    assert all(not v["model_confirmed"] for v in going)
    stopping = result["summary"]["stopping"]
    assert stopping["done_by_model_only"] == len(by_model)
    assert stopping["done_and_at_most_one_left"] == stopping["done"]
    assert stopping["model_estimated"] >= stopping["estimated"] == len(result["questions"])


def test_simulate_checks_the_gain_curve_where_the_label_page_does(collection):
    """The simulator's checks, as it judges, are the ones `check_points` finds along its finished
    sequence (the Label page's way), at the same counts and with the same estimates."""
    from labeler.judging.gain_curve import check_points, curve_checks
    from labeler.judging.stopping import StoppingRule

    folder, qrels, encoder = collection
    result = _active(folder, encoder, budget=40, stop_sample=3, patience=3)
    rule = StoppingRule(patience=3, sample_size=3)
    for qid, v in result["questions"].items():
        flags = [qrels[qid].get(d, 0) >= 1 for d in v["judged"]]
        marks = [d in set(v["sample"]) for d in v["judged"]]
        start = max(i for i, m in enumerate(marks) if m) + 1
        points = check_points(flags, start, rule)
        if v["stopped_at"] is None and points[-1] == len(flags):
            points.pop()  # the budget ran out just before the simulator would have checked there
        assert len(points) == len(v["model_checks"]) and points[-1] == v["model_estimate_at"]
        total = v["model_estimate_at"] + v["model_estimate"]["unjudged"]  # the corpus's size
        (at, last), = curve_checks(flags[:points[-1]], marks, start, total, rule, last=1,
                                   sample_relevant=v["estimate"]["sample_relevant"])
        assert at == v["model_estimate_at"] and last.to_dict() == v["model_estimate"]
