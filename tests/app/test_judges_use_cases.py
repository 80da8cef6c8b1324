"""The gate (issue 23, item 4), on SQLite and PostgreSQL: a judge below the team's bars never changes a
metric; above them every filled number has its human-only twin, judged@k is split into people and
judge, and the evaluation records the judge and the calibration; only admins declare judges and set
the bars."""
from __future__ import annotations

import pytest

from labeler_app import judges as J
from labeler_app.access import Actor, Role, local_actor
from conftest import snapshot
from labeler.errors import AccessDenied, LabelerError
from labeler.evaluation import evaluate_golden
from labeler.golden import GoldenQuery, GoldenSet
from labeler.judges.calibration import Calibration
from labeler_app.judge_runs import CollectionCalibration

ADMIN = local_actor("boss")
ANNOTATOR = Actor("ann", Role.ANNOTATOR, team=True)
EMBEDDING = 'name = "{name}"\nkind = "embedding"\nthresholds = [0.2, 0.35, 0.5]\n'
N_QUESTIONS, N_JUDGED, N_HOLES = 30, 4, 4  # 120 human pairs, 4 holes per question in the run's top 8


def _grade(i: int, j: int) -> int:
    return (i + j) % 4


def _collection(store, judges: dict[str, callable]) -> int:
    """N_QUESTIONS questions with N_JUDGED graded documents each and a saved run whose top 8 is those
    documents then N_HOLES unjudged ones; each judge grades every pair (`grade(i, doc_id, human)`)."""
    per_query, questions = {}, []
    for i in range(N_QUESTIONS):
        q = f"q-{i:02d}"
        docs = [f"d{j}" for j in range(N_JUDGED)]
        grades = {d: _grade(i, j) for j, d in enumerate(docs)}
        questions.append(GoldenQuery(q, f"Question {i}?", relevance=grades, extra={"annotations": {"asha": grades}}))
        holes = [f"h{i}-{j}" for j in range(N_HOLES)]
        # holes first: filling them moves the numbers
        order = [holes[0], docs[0], holes[1], docs[1], holes[2], docs[2], holes[3], docs[3]]
        per_query[q] = {"top_k": [{"doc_id": d, "score": 1.0 - r / 10, "grade": None} for r, d in enumerate(order)]}
    store.golden.import_set(GoldenSet(tuple(questions)))  # one transaction: asha's grades
    for name, grade in judges.items():
        J.declare_judge(store, ADMIN, EMBEDDING.format(name=name))
        spec = J.saved_judge(store, name)
        store.machine.save_grades([
            dict(query_id=f"q-{i:02d}", doc_id=d, grade=grade(i, d, _grade(i, int(d[1:])) if d[0] == "d" else None),
                 judge=name, model=spec.model, prompt_hash=spec.prompt_hash, params={}, doc_hash="", raw="", at="t")
            for i in range(N_QUESTIONS) for d in [*(f"d{j}" for j in range(N_JUDGED)),
                                                  *(f"h{i}-{j}" for j in range(N_HOLES))]])
    return store.runs.save({"model": "m"}, summary={"metrics": {}}, per_query=per_query, golden_hash="g").run_id


def _agrees(i, doc_id, human):  # people's grade where they graded; holes relevant
    return human if human is not None else 3


def _disagrees(i, doc_id, human):  # the opposite of people's grade
    return 3 - human if human is not None else 3


def test_a_judge_below_the_bars_never_changes_a_metric(store):
    run_id = _collection(store, {"bad": _disagrees})
    before = snapshot(store)
    judged = J.evaluate_with_judge(store, ANNOTATOR, run_id, "bad", bootstrap=50)
    assert not judged.verdict.passes and "binarized kappa" in judged.verdict.line
    assert judged.filled is None and judged.filled_pairs == 0
    plain = evaluate_golden(store.golden.export(), J.saved_ranking(store, run_id), J.MEASURES)
    assert dict(judged.report.metrics) == dict(plain.metrics)  # exactly the human-only numbers
    assert all(r["human + machine"] is None for r in judged.rows())
    assert [r["judged@k by the judge"] for r in judged.judged_rows()] == [0.0] * len(J.CUTOFFS)
    assert snapshot(store) == before  # and nothing was written


def test_a_judge_above_the_bars_fills_holes_beside_the_human_only_numbers(store):
    run_id = _collection(store, {"good": _agrees})
    judged = J.evaluate_with_judge(store, ANNOTATOR, run_id, "good", bootstrap=50)
    cal = judged.calibration.calibration
    assert (cal.pairs, cal.kappa_binary[1]) == (N_QUESTIONS * N_JUDGED, 1.0)
    assert judged.verdict.passes, judged.verdict.reasons
    assert judged.filled_pairs == N_QUESTIONS * N_HOLES
    rows = {r["metric"]: r for r in judged.rows()}
    # P@1: the top document is a hole, unjudged (0) for people alone, grade 3 once filled
    assert rows["precision@1"] == {"metric": "precision@1", "human only": 0.0, "human + machine": 1.0}
    for k in J.CUTOFFS:  # judged@k splits into people's share and the judge's, which add up
        split = judged.judged[k]
        assert split["human"] == pytest.approx(judged.human.metrics[f"judged@{k}"])
        assert split["human"] + split["machine"] == pytest.approx(judged.filled.metrics[f"judged@{k}"])
    assert judged.judged[1] == {"human": 0.0, "machine": 1.0}
    record = judged.record()
    assert record["calibration"]["judge"] == "good" and record["calibration"]["prompt_hash"].startswith("sha256:")
    assert record["calibration"]["fingerprint"].startswith("sha256:") and record["gate"]["passes"]
    assert record["calibration"]["pairs"] == N_QUESTIONS * N_JUDGED


def test_the_bars_are_the_admins_and_refuse_a_judge_on_too_few_pairs(store):
    run_id = _collection(store, {"good": _agrees})
    with pytest.raises(AccessDenied):
        J.set_judge_bars(store, ANNOTATOR, {"min_pairs": 1, "kappa_binary": 0, "tau": 0, "min_runs": 4})
    assert J.judge_bars(store) == {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4}
    for bad in ({"min_pairs": 0, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4}, {"min_pairs": 100},
                {"min_pairs": 100, "kappa_binary": 2, "tau": 0.9, "min_runs": 4}):
        with pytest.raises(LabelerError):
            J.set_judge_bars(store, ADMIN, bad)
    J.set_judge_bars(store, ADMIN, {"min_pairs": 500, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4})
    judged = J.evaluate_with_judge(store, ANNOTATOR, run_id, "good", bootstrap=50)
    assert not judged.verdict.passes and judged.filled is None
    assert judged.verdict.reasons == (f"{N_QUESTIONS * N_JUDGED} human pairs, fewer than 500",)


def _calibration(pairs=150, kappa=0.8, tau=0.5) -> Calibration:
    return Calibration(pairs, kappa, kappa, {1: kappa, 2: kappa}, kappa, ((0,) * 4,) * 4, 0.0, {}, kendall_tau=tau)


@pytest.mark.parametrize("runs, tau, passes", [(3, 0.5, True), (4, 0.5, False), (4, 0.95, True), (4, None, False)])
def test_the_gate_holds_tau_to_its_bar_only_with_enough_runs(runs, tau, passes):
    cal = CollectionCalibration("j", "sha256:x", "m", _calibration(tau=tau), tuple(f"#{i}" for i in range(runs)), "f")
    verdict = J.gate(cal, {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4})
    assert verdict.passes is passes
    assert any("tau" in c for c in verdict.checks)


@pytest.mark.parametrize("kappa, pairs, passes", [(0.4, 100, True), (0.39, 100, False), (None, 100, False),
                                                  (0.9, 99, False)])
def test_the_gate_holds_pairs_and_binarized_kappa_to_their_bars(kappa, pairs, passes):
    cal = CollectionCalibration("j", "sha256:x", "m", _calibration(pairs=pairs, kappa=kappa), (), "f")
    assert J.gate(cal, {"min_pairs": 100, "kappa_binary": 0.4, "tau": 0.9, "min_runs": 4}).passes is passes


@pytest.mark.parametrize("text, message", [
    ('name = "x"\nkind = "python"\ntarget = "os:system"\n', "runs from the command line"),
    ('name = "x"\nkind = "file"\npath = "/etc/passwd"\n', "runs from the command line"),
    ('name = "x"\nkind = "openai"\nmodel = "m"\nurl = "http://127.0.0.1:1/v1"\n[headers]\n'
     'Authorization = "Bearer ${DATABASE_PASSWORD}"\n', "DATABASE_PASSWORD, which the server does not offer"),
    ('name = "x"\nkind = "openai"\nmodel = "m"\nurl = "http://127.0.0.1:1/v1"\n[headers]\n'
     'Authorization = "Bearer sk-abcdefghijklmnopqrstuvwx"\n', "plain text"),
])
def test_a_judge_declared_in_the_app_cannot_run_code_or_read_secrets(store, text, message):
    before = snapshot(store)
    with pytest.raises(LabelerError, match=message):
        J.declare_judge(store, ADMIN, text)
    assert snapshot(store) == before


def test_only_admins_declare_judges_and_a_team_judge_calls_only_listed_hosts(store, monkeypatch):
    before = snapshot(store)
    text = 'name = "x"\nkind = "openai"\nmodel = "m"\nurl = "http://10.0.0.1:8000/v1"\n'
    for who in (ANNOTATOR, Actor("v", Role.VIEWER, team=True)):
        with pytest.raises(AccessDenied):
            J.declare_judge(store, who, text)
    with pytest.raises(LabelerError, match="may not call"):
        J.declare_judge(store, Actor("boss", Role.ADMIN, team=True), text)
    assert snapshot(store) == before
    monkeypatch.setenv("LABELER_SYSTEM_HOSTS", "10.0.0.1:8000")
    assert J.declare_judge(store, Actor("boss", Role.ADMIN, team=True), text) == "x"
    assert store.machine.judge_specs()["x"]["url"] == "http://10.0.0.1:8000/v1"


def test_grading_with_a_judge_needs_the_right_to_run_evaluations_and_a_run_of_the_collection(store):
    from labeler.corpus import load_corpus
    from conftest import SAMPLE
    from labeler_storage import CollectionStore

    run_id = _collection(store, {"good": _agrees})
    store.questions.add("Elsewhere?", collection="other")
    before = snapshot(store)
    with pytest.raises(AccessDenied):
        J.judge_holes(store, Actor("v", Role.VIEWER, team=True), "good", run_id, load_corpus(SAMPLE))
    with pytest.raises(LabelerError, match="is a run of collection 'default', not of 'other'"):
        J.evaluate_with_judge(CollectionStore(store, "other"), ANNOTATOR, run_id, "good", bootstrap=0)
    assert snapshot(store) == before


def test_a_judged_evaluation_saves_as_a_run_that_records_its_judge_and_calibration(store):
    from labeler_app.runs import report_of

    run_id = _collection(store, {"good": _agrees, "bad": _disagrees})
    bad = J.evaluate_with_judge(store, ANNOTATOR, run_id, "bad", bootstrap=50)
    before = snapshot(store)
    with pytest.raises(LabelerError, match="below the team's bars"):
        J.save_judged(store, ANNOTATOR, bad)
    assert snapshot(store) == before
    judged = J.evaluate_with_judge(store, ANNOTATOR, run_id, "good", bootstrap=50)
    saved = J.save_judged(store, ANNOTATOR, judged)
    assert saved.name == f"#{run_id} + judge good" and saved.created_by == "ann"
    assert dict(report_of(saved).metrics) == dict(judged.filled.metrics)
    machine = saved.summary["settings"]["machine"]
    assert machine["calibration"]["judge"] == "good" and machine["calibration"]["fingerprint"] == \
        judged.calibration.fingerprint
    assert machine["calibration"]["confusion"] == [list(r) for r in judged.calibration.calibration.confusion]
    assert machine["gate"] == {"passes": True, "reasons": []} and machine["filled_pairs"] == N_QUESTIONS * N_HOLES
    assert [r.run_id for r in store.runs.list()] == [saved.run_id, run_id]
    assert machine["human_only"] == {m: v for m, v in judged.human.metrics.items() if not m.startswith("judged@")}


def test_a_saved_filled_run_names_its_human_only_twin_wherever_it_is_listed(store):
    from labeler_app import compare, evaluate

    run_id = _collection(store, {"good": _agrees})
    judged = J.evaluate_with_judge(store, ANNOTATOR, run_id, "good", bootstrap=50)
    saved = J.save_judged(store, ANNOTATOR, judged)
    rows = {r["run"]: r for r in evaluate.history_rows(store.runs.list())}
    assert rows[run_id]["machine grades"] is None  # people's grades alone
    human, split = judged.human.metrics, judged.judged[10]
    assert rows[saved.run_id]["machine grades"] == (
        f"holes filled by judge good; human-only twin: run #{run_id} (ndcg@10 {human['ndcg@10']:.4f}, recall@10 "
        f"{human['recall@10']:.4f}); judged@10 {split['human']:.2f} by people + {split['machine']:.2f} by the judge")
    assert rows[saved.run_id]["ndcg@10"] == judged.filled.metrics["ndcg@10"] != human["ndcg@10"]
    data = judged.human.to_dict()  # the human-only numbers as a run of their own, to compare with
    per_query = data.pop("per_query")
    plain = store.runs.save({"model": "m"}, summary=data, per_query=per_query, golden_hash="g").run_id
    note = compare.compare_runs(store, plain, saved.run_id, ["ndcg@10"]).machine_note
    assert note.startswith(f"B: holes filled by judge good; human-only twin: run #{run_id}") and "A:" not in note
