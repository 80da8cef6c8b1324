"""Evaluate page: run a config against the golden set (the one evaluation use case,
`labeler_app.runs`, that the CLI's `eval` also calls), and what one saved run shows: means with CIs,
per type, abstention with its sweep, the worst questions; the saved-run history."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from labeler.config import RunConfig, current_names, parse_filters
from labeler.corpus import Corpus
from labeler.evaluation import CI_RESAMPLES, EvalReport
from labeler.evaluation.stale import stale_line
from labeler.metrics import DEFAULT_CUTOFFS
from labeler.progress import Progress
from labeler.retrieval import Retriever
from labeler_app import runs
from labeler_app.access import Actor, Can
from labeler_app.systems import system_line
from labeler_app.text import inert
from labeler_storage import Store
from labeler_storage.records import RunRecord, RunSummary

HEADLINE = ("recall", "precision", "mrr", "ndcg")
CUTOFFS = DEFAULT_CUTOFFS
DEFAULT_CUTOFF = 10


def headline_measures(cutoff: int) -> list[str]:
    """Recall, Precision, MRR and nDCG at one cutoff (`recall@10`): the four the page leads with."""
    return [f"{m}@{cutoff}" for m in HEADLINE]


def config_from_form(values: Mapping[str, Any]) -> RunConfig:
    """A RunConfig from the Evaluate form's values (ConfigError when a value is invalid)."""
    data = dict(values)
    data["filters"] = parse_filters(list(data.get("filters") or ()))
    data["reranker"] = data.get("reranker") or None
    return RunConfig(**data)


def run_evaluation(store: Store, actor: Actor, retriever: Retriever, config: RunConfig, *,
                   progress: Progress | None = None, name: str = "", stale: str = "include",
                   corpus_path: str | None = None) -> "RunView":
    """The built-in pipeline with `config`, as a system (`run_system`): retrieve for every golden
    question, score, save the run (who ran it, on which corpus); the saved run with the report just
    computed. Stale judgments are included, excluded or refused (`stale`). The page searches the
    collection's own corpus and puts the stale counts (and a table of the missing documents) above
    every number, so a golden set mostly missing from it is shown, not refused."""
    from labeler.systems.builtin import BuiltinSystem
    from labeler_app.systems import run_system

    actor.require(Can.RUN_EVALUATION)  # before the retriever is touched
    system = BuiltinSystem(retriever.corpus, config, retriever=retriever)
    return run_system(store, actor, system, retriever.corpus, k=config.k, name=name, stale=stale,
                      corpus_path=corpus_path, progress=progress, abstain_threshold=config.abstain_threshold,
                      allow_missing=True)


@dataclass(frozen=True)
class RunView:
    """One saved run as the page shows it."""

    record: RunRecord
    report: EvalReport

    @property
    def caption(self) -> str:
        """What the numbers rest on: how many questions were scored, left out, and against what."""
        c = self.report.counts
        made = inert(system_line(self.record.config)) or f"config `{self.record.config_hash}`"
        return (f"{c.get('answerable', 0)} answerable questions scored · {c.get('unanswerable', 0)} unanswerable · "
                f"{c.get('unjudged', 0)} not yet judged (left out) · {made} · "
                f"corpus {inert(self.record.corpus_line)} · golden set `{(self.record.golden_hash or '')[7:15]}`")

    @property
    def missing_rows(self) -> list[dict[str, Any]]:
        """Per question, the judged documents the searched corpus lacks (and those edited since judged)."""
        info = (self.report.settings or {}).get("stale") or {}
        missing, edited = info.get("missing") or {}, info.get("edited") or {}
        return [{"query_id": q, "question": self.report.questions.get(q, ""),
                 "missing from the corpus": ", ".join(missing.get(q, ())), "edited since judged": ", ".join(edited.get(q, ()))}
                for q in sorted(set(missing) | set(edited))]

    @property
    def failed_warning(self) -> str:
        """How many questions the system failed on (left out of the scores), "" when none."""
        return runs.failed_line(self.report)

    @property
    def stale_warning(self) -> str:
        """How many stale judgments the run's numbers rest on ("" when none)."""
        return stale_line(self.report.settings)


def load_run(store: Store, run_id: int) -> RunView:
    """A saved run and the report it holds."""
    record = store.runs.load(run_id)
    return RunView(record, runs.report_of(record))


def metric_rows(report: EvalReport, cutoff: int) -> list[dict[str, Any]]:
    """Mean and 95% CI of Recall/Precision/MRR/nDCG at the cutoff (plus hit and condensed nDCG there when
    computed). judged@cutoff is one figure per cutoff, shared by every row: `judged_line` says it once."""
    rows = []
    for name in [*headline_measures(cutoff), f"hit@{cutoff}", f"ndcg_condensed@{cutoff}"]:
        if name in report.metrics:
            lo, hi = report.ci95.get(name, (float("nan"), float("nan")))
            rows.append({"metric": name, "mean": report.metrics[name], "ci95_low": lo, "ci95_high": hi})
    return rows


def judged_line(report: EvalReport, cutoff: int) -> str:
    """judged@cutoff, once for the table at that cutoff: what share of the top documents the numbers rest on."""
    judged = report.metrics.get(f"judged@{cutoff}")
    if judged is None:
        return ""
    return (f"judged@{cutoff} = {judged:.4f}: the share of this run's top {cutoff} documents, over the scored questions, "
            f"that has a judgment. It is one figure for cutoff {cutoff}, behind every metric above; an unjudged "
            "document counts as not relevant.")


def ci_line(report: EvalReport) -> str:
    """What ci95_low and ci95_high are, with the resamples and seed the report was scored with."""
    settings = report.settings or {}
    resamples, seed = settings.get("ci_resamples", CI_RESAMPLES), settings.get("seed", 0)
    return (f"ci95_low – ci95_high: 95% percentile bootstrap CI of the mean over the "
            f"{report.counts.get('answerable', 0)} scored questions ({resamples:,} resamples of the questions, "
            f"seed {seed}). A wide interval means too few questions to tell close runs apart.")


def score_scale_note(config: Mapping[str, Any]) -> str:
    """What the abstention threshold is a threshold on, when it is not a similarity ("" otherwise)."""
    config = current_names(config)  # a run saved before a key's rename
    if config.get("mode") != "hybrid" or config.get("reranker"):
        return ""
    rrf_k = int(config.get("rrf_k") or 60)
    return (f"Hybrid retrieval: these scores are fused (RRF) ranks, Σ 1/({rrf_k} + rank) over the dense and BM25 "
            f"lists, at most 2/{rrf_k + 1} = {2 / (rrf_k + 1):.4f}, not similarities: a threshold on them says how "
            "high both lists ranked the top document, not how close it is to the question.")


LOW_JUDGED = 0.5  # below this share of judged documents above the cutoff, the page warns


def coverage_warning(report: EvalReport, cutoff: int, threshold: float = LOW_JUDGED) -> str:
    """A warning when judged@cutoff of the run is below `threshold` ("" otherwise), saying what it does."""
    judged = report.metrics.get(f"judged@{cutoff}")
    if judged is None or judged >= threshold:
        return ""
    return (f"judged@{cutoff} is {judged:.2f}, below {threshold:.2f}: {1 - judged:.0%} of this run's top {cutoff} documents "
            "were never judged, and an unjudged document counts as not relevant. Recall, precision and nDCG are "
            f"lower bounds here; ndcg_condensed@{cutoff} scores the judged documents only. Judge the holes to firm them up.")


def per_type_rows(report: EvalReport, cutoff: int) -> list[dict[str, Any]]:
    """One row per query type: question count and the headline metrics at the cutoff."""
    return [{"query_type": t, "questions": report.type_counts.get(t, 0),
             **{m: values.get(m) for m in headline_measures(cutoff)}}
            for t, values in report.per_type.items()]


def abstention_lines(report: EvalReport) -> list[tuple[str, str, str]]:
    """(label, value, help) metrics for abstention at the run's threshold, empty when none was set."""
    a = report.abstention
    if a is None or a.at_threshold is None:
        return []
    at = a.at_threshold
    return [("Unanswerable correctly left empty", f"{(at.unanswerable_abstained or 0):.0%}",
             f"At threshold {a.threshold!r}, over {a.unanswerable} unanswerable questions."),
            ("Answerable wrongly left empty", f"{(at.answerable_abstained or 0):.0%}",
             f"At threshold {a.threshold!r}, over {a.answerable} answerable questions.")]


def suggestion_line(report: EvalReport) -> str:
    """The suggested threshold and why, or what to do to get one."""
    a = report.abstention
    if a is None or a.suggested is None:
        return "Mark some questions unanswerable and set an abstention threshold in the config to score it."
    s = a.suggested  # shown in full (the sweep's thresholds are short decimals): entering it gives this accuracy
    return (f"Suggested threshold **{s.threshold!r}**: balanced accuracy {s.balanced_accuracy:.0%} "
            f"({a.rule}).")


def sweep_rows(report: EvalReport) -> list[dict[str, Any]]:
    """The abstention sweep: threshold -> shares abstained on."""
    if report.abstention is None:
        return []
    return [{"threshold": p.threshold, "unanswerable left empty": p.unanswerable_abstained,
             "answerable left empty": p.answerable_abstained} for p in report.abstention.sweep]


NOT_IN_CORPUS = "(not in the corpus)"
NO_CORPUS = "(corpus not available)"


def document_title(corpus: Corpus | None, doc_id: str) -> str:
    """A document's title in `corpus` (the one a run searched), or why there is none to show."""
    if corpus is None:
        return NO_CORPUS
    doc = corpus.get(doc_id)
    return NOT_IN_CORPUS if doc is None else doc.title


def worst_questions(report: EvalReport, metric: str, n: int = 10,
                    corpus: Corpus | None = None) -> list[dict[str, Any]]:
    """The n scored questions lowest on `metric`, with their retrieved documents (titled from
    `corpus`, the corpus the run searched) and grades."""
    out = []
    for r in report.worst(metric, n):
        rank = r.first_relevant_rank
        out.append({"query_id": r.query_id, "question": report.questions.get(r.query_id, ""),
                    "title": (f"{inert(r.query_id)} · {metric} {r.metrics[metric]:.4f} · first relevant at "
                              f"{'rank ' + str(rank) if rank else 'none retrieved'} · "
                              f"{inert(report.questions.get(r.query_id, ''))}"),  # markdown: an expander's label
                    "retrieved": [{"rank": i, "doc_id": d.doc_id, "title": document_title(corpus, d.doc_id),
                                   "score": d.score, "grade": "unjudged" if d.grade is None else str(d.grade)}
                                  for i, d in enumerate(r.top_k, start=1)]})
    return out


def history_rows(saved: Sequence[RunSummary]) -> list[dict[str, Any]]:
    """The saved-run table: id, time, who ran it, name, config and golden-set hashes, headline means at 10."""
    rows = []
    for r in saved:
        metrics = r.summary.get("metrics", {})
        stale = (r.summary.get("settings") or {}).get("stale") or {}
        rows.append({"run": r.run_id, "created": r.created_at, "by": r.created_by, "name": r.name,
                     "corpus": r.corpus_line, "stale judged documents": stale.get("n_stale"),
                     "config": r.config_hash,
                     "golden": (r.golden_hash or "")[7:15],
                     **{m: metrics.get(m) for m in headline_measures(DEFAULT_CUTOFF)},
                     "machine grades": runs.filled_note(r.summary)})  # a filled run names its human-only twin
    return rows


def run_label(run: RunSummary) -> str:
    """`#3 · 2026-11-29 20:10 · hybrid · 1a2b…` for pickers."""
    return (f"#{run.run_id} · {run.created_at.replace('T', ' ')[:16]}" + (f" · {run.name}" if run.name else "")
            + f" · {run.config_hash}")
