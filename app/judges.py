"""Machine judges in the app: declare one as data, test it on one pair, grade a run's holes with it,
its calibration against the team's people, and the gate that decides whether its grades may count.

The gate (issue 23, item 4). A judge's grades may fill holes in a metric only when its calibration
on the collection (labeler_app.judge_runs.collection_calibration: people's grades against its current,
non-stale grades) rests on at least `min_pairs` human pairs, its binarized kappa (relevant = grade
>= 1) reaches `kappa_binary`, and, once the collection has `min_runs` saved runs, Kendall's tau
between the runs' orders by nDCG@10 under people's and under its grades reaches `tau` (team setting
`judge_bars`, which only admins change; defaults 100, 0.4, 0.9, 4). Otherwise its grades are
suggestions only: `evaluate_with_judge` then gives the human-only numbers and nothing else.

A judged evaluation records which judge (name, model, prompt hash) and which calibration (its
figures and the fingerprint of the pairs and runs it rests on) it used, shows each human-only
number beside the filled one, and splits judged@k into the share people judged and the share the
judge filled. Holes are filled only on questions people have judged, so both numbers are over
the same questions. It scores the run's saved top 10 (what a saved run keeps), so cutoffs <= 10.

Declaring: only admins (`Can.DECLARE_JUDGES`): an openai judge makes the server send documents
where it says; so, as for search systems (labeler_app.systems), it may read only the environment variables
the operator lists (LABELER_SYSTEM_ENV) and, in a team deployment, call only the listed hosts
(LABELER_SYSTEM_HOSTS). `python` and `file` judges run code or read server files: CLI only.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from labeler.corpus import Corpus
from labeler.errors import InputError
from labeler.evaluation import EvalReport, evaluate_golden
from labeler.golden import GoldenSet, golden_fingerprint
from labeler.judges import JudgePair, JudgeResult, JudgeSpec, judge_spec_from_dict, make_judge, parse_judge_spec
from labeler.progress import Progress
from labeler_app.access import Actor, Can
from labeler_app.judge_runs import (
    CollectionCalibration, JudgeRun, collection_calibration, hole_pairs, judge_pairs, judged_pairs, require_own_run,
)
from labeler_app.systems import allowed_env, check_host, endpoint_hosts
from labeler_storage import Store
from labeler_storage.records import RunRecord
from labeler_storage.team_settings import DEFAULT_SETTINGS

APP_KINDS = ("openai", "embedding")  # python (runs code) and file (reads the server's files): CLI only
CUTOFFS = (1, 3, 5, 10)  # a saved run keeps its top 10
MEASURES = [f"{m}@{k}" for m in ("recall", "precision", "mrr", "ndcg", "hit") for k in CUTOFFS] + ["ndcg_condensed@10"]
_ENV_REF = re.compile(r"\$\{([^}]*)\}")
EXAMPLE = '''name = "umbrela-local"
kind = "openai"
model = "llama3.1:8b"
url = "http://127.0.0.1:11434/v1"
temperature = 0.0
max_tokens = 200
concurrency = 2
retries = 3
timeout = 30
# the prompt is UMBRELA's unless you write one with {question}, {title} and {text}

[headers]
Authorization = "Bearer ${OPENAI_API_KEY}"
'''


# ------------------------------------------------------------------------------------ declaring

def parse_app_judge(text: str, actor: Actor) -> JudgeSpec:
    """A judge declaration typed in the app, checked: a kind the app runs, environment references only
    to variables the operator offers, a host the deployment allows."""
    spec = parse_judge_spec(text, "the declaration")
    if spec.kind not in APP_KINDS:
        raise InputError(f"the app runs {' and '.join(APP_KINDS)} judges; a {spec.kind} judge runs from the command line",
                         hint="grade with `labeler judge COLLECTION --judge FILE`, then calibrate here.")
    _check_env(spec)
    if spec.kind == "openai":
        check_host(str(spec.params.get("url", "")), endpoint_hosts(actor))
    return spec


def _check_env(spec: JudgeSpec) -> None:
    """Refuse a declaration that reads an environment variable the operator does not offer (now)."""
    refs = {r for v in _strings(spec.params) for r in _ENV_REF.findall(v)}
    if refused := sorted(refs - allowed_env()):
        raise InputError(f"the declaration reads environment variable(s) {', '.join(refused)}, which the server does "
                         "not offer to declarations",
                         hint="the server's operator lists the variables it offers in LABELER_SYSTEM_ENV.")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def declare_judge(store: Store, actor: Actor, text: str) -> str:
    """Check and save a judge under its name (replacing one of that name); the name. A judge's grades are
    keyed by its name and prompt: to change its model, declare it under a new name."""
    actor.require(Can.DECLARE_JUDGES)
    spec = parse_app_judge(text, actor)
    store.machine.save_judge(spec.name, spec.to_dict(), by=actor.name)
    return spec.name


def delete_judge(store: Store, actor: Actor, name: str) -> bool:
    """Forget a saved judge (its grades stay); False if there was none."""
    actor.require(Can.DECLARE_JUDGES)
    return store.machine.delete_judge(name)


def judge_specs(store: Store) -> dict[str, dict[str, Any]]:
    """The saved judges' declarations by name (never a secret value)."""
    return store.machine.judge_specs()


def machine_grade_counts(store: Store) -> list[Any]:
    """Per judge: its machine grades in the collection, current and stale, and over how many questions."""
    return store.machine.counts()


def saved_judge(store: Store, name: str) -> JudgeSpec:
    """A saved judge's declaration, checked again as it is read."""
    specs = store.machine.judge_specs()
    if name not in specs:
        raise InputError(f"no saved judge named {name!r}",
                         hint=f"saved judges: {', '.join(sorted(specs)) or '(none yet)'}; declare one on the Judges page.")
    return judge_spec_from_dict(specs[name], source=f"saved judge {name!r}")


def judge_for(spec: JudgeSpec, actor: Actor):
    """The judge `spec` declares, calling only the hosts `actor`'s deployment allows and reading only the
    variables the operator offers, as they are when it runs (the lists may have changed since it was saved)."""
    _check_env(spec)
    if spec.kind == "openai":
        check_host(str(spec.params.get("url", "")), endpoint_hosts(actor))
    return make_judge(spec, allowed_hosts=endpoint_hosts(actor))


def test_pair(actor: Actor, text: str, pair: JudgePair) -> JudgeResult:
    """Grade one pair with a declaration as typed (not saved): its MachineGrade (with the raw answer) or
    JudgeFailure. Nothing is stored."""
    actor.require(Can.DECLARE_JUDGES)
    with judge_for(parse_app_judge(text, actor), actor) as judge:
        results = list(judge.judge([pair]))
    if not results:
        raise InputError("the judge gave no answer for the pair", hint="check the declaration's kind and model.")
    return results[0]


def sample_pair(store: Store, corpus: Corpus, query_id: str, doc_id: str) -> JudgePair:
    """The pair (a question of the collection, a document of the corpus) to test a judge on."""
    question = store.questions.get(query_id)
    doc = corpus.get(doc_id)
    if question is None or doc is None:
        raise InputError(f"no {'question ' + repr(query_id) if question is None else 'document ' + repr(doc_id)} here",
                         hint="pick a question of the collection and a document of its corpus.")
    return JudgePair.of_document(question.query_id, question.question, doc)


def judge_holes(store: Store, actor: Actor, name: str, run_id: int | None, corpus: Corpus, *,
                limit: int | None = None, progress: Progress | None = None) -> JudgeRun:
    """Grade a saved run's holes with a saved judge (run_id None: the pairs people graded, for its
    calibration); the use case `labeler judge` runs: resumable, each pair once per judge, prompt and
    content; failures listed."""
    actor.require(Can.RUN_EVALUATION)
    spec = saved_judge(store, name)
    pairs, missing = (judged_pairs(store, corpus, limit=limit) if run_id is None
                      else hole_pairs(store, run_id, corpus, limit=limit))
    with judge_for(spec, actor) as judge:
        return judge_pairs(store, judge, spec, pairs, progress=progress, missing=missing)


# ------------------------------------------------------------------------------------ the gate

def judge_bars(store: Store) -> dict[str, Any]:
    """The team's bars for machine judges (team setting `judge_bars`)."""
    return dict(store.accounts.settings().get("judge_bars") or DEFAULT_SETTINGS["judge_bars"])


def set_judge_bars(store: Store, actor: Actor, bars: Mapping[str, Any]) -> dict[str, Any]:
    """Set the bars (admins: a team setting); the bars as stored."""
    actor.require(Can.TEAM_SETTINGS)
    store.accounts.set_setting("judge_bars", dict(bars), by=actor.name)
    return judge_bars(store)


@dataclass(frozen=True)
class Verdict:
    """The gate's decision on one calibration: may its grades fill holes, and why (not)."""

    passes: bool
    reasons: tuple[str, ...]  # each bar missed (empty when it passes)
    checks: tuple[str, ...]  # each bar with the figure held against it

    @property
    def line(self) -> str:
        if self.passes:
            return "passes the team's bars: its grades may fill holes (each filled number beside its human-only twin)"
        return "below the team's bars, suggestions only (it changes no metric): " + "; ".join(self.reasons)


def gate(cal: CollectionCalibration, bars: Mapping[str, Any]) -> Verdict:
    """Hold a calibration against the bars (module docstring)."""
    c = cal.calibration
    kappa, tau = c.kappa_binary[1], c.kendall_tau
    checks = [f"human pairs {c.pairs} (bar >= {bars['min_pairs']})",
              f"binarized kappa@1 {_fmt(kappa)} (bar >= {bars['kappa_binary']})"]
    missed = []
    if c.pairs < bars["min_pairs"]:
        missed.append(f"{c.pairs} human pairs, fewer than {bars['min_pairs']}")
    if kappa is None or kappa < bars["kappa_binary"]:
        missed.append(f"binarized kappa {_fmt(kappa)} < {bars['kappa_binary']}")
    if len(cal.runs) >= bars["min_runs"]:
        checks.append(f"Kendall tau {_fmt(tau)} over {len(cal.runs)} runs (bar >= {bars['tau']})")
        if tau is None or tau < bars["tau"]:
            missed.append(f"Kendall tau {_fmt(tau)} < {bars['tau']} over {len(cal.runs)} runs")
    else:
        checks.append(f"Kendall tau not required: {len(cal.runs)} saved runs, fewer than {bars['min_runs']}")
    return Verdict(not missed, tuple(missed), tuple(checks))


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.3f}"


# ------------------------------------------------------------------------------------ judged evaluation

@dataclass(frozen=True)
class JudgedEvaluation:
    """A saved run scored with people's grades, and (when the judge passes the gate) with its holes filled."""

    run_id: int
    calibration: CollectionCalibration
    verdict: Verdict
    bars: Mapping[str, Any]
    human: EvalReport
    filled: EvalReport | None  # None: the judge is below the bars
    filled_pairs: int  # machine grades used to fill holes
    judged: Mapping[int, Mapping[str, float]]  # k -> {"human": share, "machine": share} of the top k
    golden_hash: str = ""  # of the golden set the filled numbers were scored against

    @property
    def report(self) -> EvalReport:
        """The numbers to quote: filled when the gate allows it, else the human-only ones."""
        return self.filled if self.filled is not None else self.human

    def rows(self) -> list[dict[str, Any]]:
        """Per metric: the human-only number beside the filled one (None when the judge may not fill)."""
        return [{"metric": m, "human only": self.human.metrics.get(m),
                 "human + machine": None if self.filled is None else self.filled.metrics.get(m)}
                for m in self.human.measures if not m.startswith("judged@")]

    def judged_rows(self) -> list[dict[str, Any]]:
        """judged@k split: the share of the top k people judged, and the share the judge filled."""
        return [{"k": k, "judged@k by people": v["human"], "judged@k by the judge": v["machine"]}
                for k, v in sorted(self.judged.items())]

    def record(self) -> dict[str, Any]:
        """What the evaluation rests on: the judge, the calibration and its fingerprint, the bars, the verdict."""
        return {"run": self.run_id, "calibration": self.calibration.to_dict(), "bars": dict(self.bars),
                "gate": {"passes": self.verdict.passes, "reasons": list(self.verdict.reasons)},
                "filled_pairs": self.filled_pairs,
                "human_only": {m: v for m, v in self.human.metrics.items() if not m.startswith("judged@")},
                "judged": {str(k): dict(v) for k, v in self.judged.items()}}


def saved_ranking(store: Store, run_id: int) -> dict[str, dict[str, float]]:
    """A saved run's top 10 per question, as kept (a run of the store's collection)."""
    record = require_own_run(store, run_id)
    return {q: {d["doc_id"]: float(d["score"] if d.get("score") is not None else 0.0) for d in row.get("top_k", ())}
            for q, row in record.per_query.items()}


def fill_holes(golden: GoldenSet, machine: Mapping[tuple[str, str], int]) -> tuple[GoldenSet, int]:
    """The golden set with machine grades added where no person graded, on questions people judged
    (answerable, with a grade); and how many were added. People's grades are never replaced."""
    added, out = 0, []
    for q in golden.queries:
        extra = {d: g for (qid, d), g in machine.items() if qid == q.query_id and d not in q.relevance}
        if q.unanswerable or not q.relevance or not extra:
            out.append(q)
            continue
        added += len(extra)
        out.append(dataclasses.replace(q, relevance={**q.relevance, **extra}))
    return GoldenSet(tuple(out)), added


def judged_split(human: EvalReport, golden: GoldenSet, filled: GoldenSet | None) -> dict[int, dict[str, float]]:
    """k -> the mean share, over the scored questions, of the top k that people judged and that the judge filled."""
    people = {q.query_id: q.relevance for q in golden.queries}
    with_machine = {q.query_id: q.relevance for q in filled.queries} if filled is not None else people
    out = {}
    scored = [r for r in human.per_query.values() if r.status == "scored"]
    for k in CUTOFFS:
        h = m = 0.0
        for r in scored:
            top = [d.doc_id for d in r.top_k[:k]]
            if top:
                h += sum(d in people[r.query_id] for d in top) / len(top)
                m += sum(d in with_machine[r.query_id] and d not in people[r.query_id] for d in top) / len(top)
        out[k] = {"human": h / len(scored) if scored else 0.0, "machine": m / len(scored) if scored else 0.0}
    return out


def evaluate_with_judge(store: Store, actor: Actor, run_id: int, name: str, *, bootstrap: int = 1000) -> JudgedEvaluation:
    """Score a saved run with people's grades and, when the judge passes the gate, with its grades filling
    the holes: both numbers, the judged@k split, and the judge and calibration used."""
    actor.require(Can.READ)
    spec = saved_judge(store, name)
    cal = collection_calibration(store, spec, bootstrap=bootstrap)
    bars = judge_bars(store)
    verdict = gate(cal, bars)
    golden = store.golden.export()
    run = saved_ranking(store, run_id)
    human = evaluate_golden(golden, run, MEASURES)
    filled_report, filled, n = None, None, 0
    if verdict.passes:
        filled, n = fill_holes(golden, cal.machine)
        filled_report = evaluate_golden(filled, run, MEASURES)
    return JudgedEvaluation(run_id, cal, verdict, bars, human, filled_report, n, judged_split(human, golden, filled),
                            golden_fingerprint(filled) if filled is not None else "")


def save_judged(store: Store, actor: Actor, judged: JudgedEvaluation) -> RunRecord:
    """Save a judged evaluation's filled numbers as a run of their own (named after the run and the judge),
    with what they rest on under settings["machine"]; refused for a judge below the bars (nothing to save:
    its numbers are the run's own)."""
    actor.require(Can.RUN_EVALUATION)
    if judged.filled is None:
        raise InputError(f"judge {judged.calibration.judge!r} is below the team's bars: its grades change no number",
                         hint="the run's numbers are its human-only ones; nothing to save.")
    source = require_own_run(store, judged.run_id)
    data = judged.filled.to_dict()
    per_query = data.pop("per_query")
    data["settings"] = {**data["settings"], "machine": judged.record()}
    return store.runs.save(source.config, summary=data, per_query=per_query, golden_hash=judged.golden_hash,
                          corpus_fingerprint=source.corpus_fingerprint, config_hash=source.config_hash,
                          name=f"{source.name or '#' + str(source.run_id)} + judge {judged.calibration.judge}",
                          by=actor.name, corpus_path=source.corpus_path)


def confusion_rows(cal: CollectionCalibration) -> list[dict[str, int]]:
    """The confusion matrix as rows (human grade 0-3) of counts per machine grade 0-3, for a heat map."""
    return [{"human grade": h, **{f"machine {m}": int(n) for m, n in enumerate(row)}}
            for h, row in enumerate(cal.calibration.confusion)]
