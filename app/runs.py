"""The evaluation use case, one for the app and the CLI: a golden set and a system -> `EvalReport`
-> a saved run. Every system takes the one path, `evaluate_system`: an endpoint, a callable, a run
file and the built-in pipeline (as `BuiltinSystem`; `evaluate_retriever` only wraps an open
retriever in one). What made a run is one typed record, `RunOrigin` (the pipeline's RunConfig, or
another system's declaration), saved by the one `save_report`.

Three things are named apart: a *ranking file* (TREC run file, `--save-run`), a *report* (the
`EvalReport` scored from a ranking; `--json`) and a *saved run* (a report stored in the database
with its origin, corpus and golden set). Nothing here knows about pages or terminals: callers
pass a progress callback and render the report themselves. A saved run holds the report's
`to_dict()` split in two (the summary, and the per-question entries), so `report_of(saved)` gives
back exactly the report that was saved.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from labeler.errors import ConfigError, InputError
from labeler.evaluation import CI_RESAMPLES, EvalReport, evaluate_golden
from labeler.evaluation.stale import apply_stale_policy, stale_settings
from labeler.golden import GoldenSet, golden_fingerprint
from labeler.metrics import DEFAULT_CUTOFFS, Run, standard_measures
from labeler.progress import Progress

if TYPE_CHECKING:
    from labeler.config import RunConfig
    from labeler.corpus import Corpus
    from labeler.retrieval import Retriever
    from labeler.systems import QuestionError, System, SystemRun  # pragma: no cover


class SavedRun(Protocol):
    """What a store gives back for a saved run (labeler_storage.records.RunRecord satisfies it)."""

    summary: Mapping[str, Any]
    per_query: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class RunOrigin:
    """What made a run: the built-in pipeline's `config`, or another system's declaration
    (`system`: what `System.describe()` says, secrets excluded). Stored in the runs table's config
    column as the RunConfig's dict, or as {"system": declaration}; `of_saved` reads either back."""

    config: "RunConfig | None" = None
    system: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, system: "System") -> "RunOrigin":
        """The origin of a run of `system`: a built-in pipeline is recorded by its config."""
        config = getattr(system, "config", None) if system.kind == "builtin" else None
        return cls(config=config) if config is not None else cls(system=system.describe())

    @classmethod
    def of_saved(cls, stored: Mapping[str, Any]) -> "RunOrigin":
        """The origin a saved run's config column holds."""
        from labeler.config import RunConfig

        if isinstance(stored.get("system"), Mapping):
            return cls(system=dict(stored["system"]))
        return cls(config=RunConfig.from_dict(dict(stored)))

    def to_dict(self) -> dict[str, Any]:
        """What the runs table's config column holds."""
        return self.config.to_dict() if self.config is not None else {"system": dict(self.system or {})}

    @property
    def config_hash(self) -> str | None:
        """The pipeline config's hash (None: the store hashes the declaration)."""
        return self.config.config_hash if self.config is not None else None

    def default_name(self) -> str:
        return "" if self.config is not None else str((self.system or {}).get("name") or "")


class RunSink(Protocol):
    """Where runs are saved (storage.Store satisfies it)."""

    def save_run(self, config: Any, *, summary: Mapping[str, Any], per_query: Mapping[str, Any],
                 golden_hash: str, corpus_fingerprint: str | None = None, config_hash: str | None = None,
                 name: str = "", **kwargs: Any) -> Any: ...


def measures_for(cutoffs: Iterable[int] = DEFAULT_CUTOFFS, extra: Iterable[str] = ()) -> list[str]:
    """The standard measures at these cutoffs (with judged@k), condensed nDCG at each cutoff, then
    any other measure asked for (e.g. by a bar)."""
    cutoffs = sorted(set(cutoffs))
    names = [str(m) for m in standard_measures(cutoffs)] + [f"ndcg_condensed@{k}" for k in cutoffs]
    return names + [m for m in dict.fromkeys(extra) if m not in names]


class NoJudgmentsError(InputError):
    """Scoring refused because no answerable question of the golden set has a counted grade."""


def require_judgments(golden: GoldenSet) -> None:
    """Refuse a golden set with no answerable question judged yet: its report would be empty. When
    its only grades are imported files' kept apart (not counted: labeler_storage.grade_sources), say so.
    Refuse one whose every grade is 0 and no question unanswerable too: every metric would be 0, resting on
    nothing (nDCG counts any grade above 0 whatever --min-grade, so a 0/1 set with --min-grade 2 is scored)."""
    answerable = [q for q in golden.queries if not q.unanswerable]
    if any(g > 0 for q in answerable for g in q.relevance.values()):
        return
    if any(q.relevance for q in answerable):  # judged, every grade 0
        if len(answerable) < len(golden.queries):
            return  # unanswerable questions: an abstention report has something to say
        n = sum(len(q.relevance) for q in answerable)
        raise NoJudgmentsError(f"nothing to score: every one of the {n} judged documents is graded 0, so every "
                               "metric would be 0 whatever the ranking",
                               hint="grade the documents that answer each question (or mark a question with no "
                                    "answer unanswerable).")
    apart: dict[str, int] = {}  # source -> its grades the consensus leaves out
    for q in golden.queries:
        for name, said in (q.extra.get("grade_sources") or {}).items():
            if said.get("counted") is False:
                apart[name] = apart.get(name, 0) + len((q.extra.get("annotations") or {}).get(name, ()))
    if apart:
        raise NoJudgmentsError(f"nothing to score: the only grades are {sum(apart.values())} of imported files kept apart "
                         f"({', '.join(sorted(apart)[:3])}), which no metric counts",
                         hint="count a source in the consensus on the Golden set page (or `labeler sources count "
                              "NAME`), or grade candidates on the Label page.")
    raise NoJudgmentsError("no labelled question to score yet",
                     hint="grade some candidates on the Label page, or import a golden set with judgments.")


class NoSharedQuestionError(InputError):
    """Scoring refused because the run ranks none of the golden set's questions."""


def require_shared_questions(golden: GoldenSet, run: Run, *, source: str | None = None) -> None:
    """NoSharedQuestionError when the run ranks no question of the golden set: a run made for
    another golden set, where every question would score 0."""
    asked = [q.query_id for q in golden.queries]
    if not asked or not run or any(q in run for q in asked):
        return
    raise NoSharedQuestionError(
        f"the run shares no question with the golden set: it ranks {len(run)} questions (first {next(iter(run))!r}), "
        f"the golden set has {len(asked)} (first {asked[0]!r}), so every question would score 0",
        path=source, hint="score it against the golden set it was made for, or (on the command line) pass "
                          "--allow-missing to score anyway.")


def score_run(golden: GoldenSet, run: Run, *, cutoffs: Iterable[int] = DEFAULT_CUTOFFS, extra: Iterable[str] = (),
              min_grade: int = 1, abstain_threshold: float | None = None,
              ci_resamples: int = CI_RESAMPLES, allow_missing: bool = False) -> EvalReport:
    """Score a fixed run (e.g. a TREC run file) against the golden set; refused when the run shares
    no question with it (`require_shared_questions`), unless `allow_missing`."""
    if not allow_missing:
        require_shared_questions(golden, run)
    if abstain_threshold is not None and not math.isfinite(abstain_threshold):
        raise ConfigError(f"abstention threshold {abstain_threshold} is not a finite number",
                          hint="give a score such as 0.3, or leave it out for none.")
    return evaluate_golden(golden, run, measures_for(cutoffs, extra), min_grade=min_grade,
                           abstain_threshold=abstain_threshold, ci_resamples=ci_resamples)


def evaluate_retriever(golden: GoldenSet, retriever: "Retriever", config: "RunConfig", *,
                       cutoffs: Iterable[int] = DEFAULT_CUTOFFS, extra: Iterable[str] = (), min_grade: int = 1,
                       progress: Progress | None = None, stale: str = "include", allow_missing: bool = False,
                       ) -> tuple[dict[str, dict[str, float]], EvalReport]:
    """The built-in pipeline with `config` on an open retriever, through `evaluate_system` like any
    system: (the ranking, the report). Stale judgments are counted against the retriever's corpus."""
    from labeler.systems.builtin import BuiltinSystem

    system = BuiltinSystem(retriever.corpus, config, retriever=retriever)
    answered, report = evaluate_system(golden, system, k=config.k, corpus=retriever.corpus, cutoffs=cutoffs,
                                       extra=extra, min_grade=min_grade, stale=stale, progress=progress,
                                       abstain_threshold=config.abstain_threshold, allow_missing=allow_missing)
    return answered.run(), report


def evaluate_system(golden: GoldenSet, system: "System", *, k: int = 100, corpus: "Corpus | None" = None,
                    cutoffs: Iterable[int] = DEFAULT_CUTOFFS, extra: Iterable[str] = (), min_grade: int = 1,
                    stale: str = "include", progress: Progress | None = None,
                    abstain_threshold: float | None = None,
                    allow_missing: bool = False) -> tuple["SystemRun", EvalReport]:
    """Ask any system (an endpoint, a callable, a run file, the built-in pipeline) for every golden
    question and score what it answered. A question the system failed on is not scored as a miss:
    it is left out, and the report lists it with the error (settings["failed"]). With `corpus`,
    stale judgments are counted (and included, excluded or refused) as for the built-in pipeline.
    `abstain_threshold` is on the system's own score scale (its top hit's score), as for a run file.
    A golden set nearly all missing from `corpus`, or a run file sharing no question with it, is
    refused unless `allow_missing`."""
    found = None
    if corpus is not None:
        golden, found = apply_stale_policy(golden, corpus, stale, allow_missing=allow_missing)
    answered = system.search_many(golden.questions(), k, progress=progress)
    # A question a run file does not rank scores 0, as in trec_eval -c; any other error is a failure.
    failed = {q: e for q, e in answered.errors.items() if e.kind != "not_in_run"}
    if len(failed) == len(golden.queries):
        raise no_answer_error(system.name, [failed[q] for q in answered.query_ids if q in failed])
    scored = GoldenSet(tuple(q for q in golden.queries if q.query_id not in failed))
    report = score_run(scored, answered.run(), cutoffs=cutoffs, extra=extra, min_grade=min_grade,
                       abstain_threshold=abstain_threshold, allow_missing=allow_missing)
    settings = {**report.settings, "system": system.describe(),
                "failed": {q: f"{e.kind}: {e.message}" for q, e in failed.items()}}
    if found is not None:
        settings["stale"] = stale_settings(found, stale)
    counts = {**report.counts, "questions": len(golden.queries), "failed": len(failed)}
    return answered, dataclasses.replace(report, settings=settings, counts=counts)


def no_answer_error(name: str, errors: list["QuestionError"]) -> InputError:
    """One line for a system that failed every question: how, the first error once, and its hint."""
    if not errors:
        return InputError(f"{name}: the golden set has no question to ask", hint="import a golden set first.")
    kinds: dict[str, int] = {}
    for error in errors:
        kinds[error.kind] = kinds.get(error.kind, 0) + 1
    counted = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    first = errors[0]
    return InputError(f"{name}: no question answered, all {len(errors)} failed ({counted}); "
                      f"first, {first.query_id}: {first.reason}",
                      hint=first.hint or "try one question alone (for an endpoint, Test query on the Evaluate "
                                         "page shows its raw answer) and fix what it reports.")


THIN_JUDGED = 0.01  # mean judged@10 below this: the scores rest on almost no judgment


def thin_judgments_line(report: EvalReport) -> str:
    """A warning when under 1 in 100 of the ranked top-10 documents has a judgment ("" otherwise): every
    unjudged document counts as not relevant, so such scores say little of the ranking (a run made for
    another golden set scored 0.002 with no word of it). A warning, not a refusal: a weak system on a set
    judged one document a question can be that low."""
    judged = report.coverage("ndcg@10")
    if judged is None or judged >= THIN_JUDGED:
        return ""
    return (f"judged@10 is {judged:.3f}: almost none of the documents ranked in the top 10 has a judgment, and "
            "every unjudged one counts as not relevant, so these scores rest on almost nothing (is the run for "
            "this golden set?)")


def failed_line(report: EvalReport) -> str:
    """`3 questions failed and were not scored (timeout: 2, http_status: 1)` ("" when none did)."""
    failed = (report.settings or {}).get("failed") or {}
    if not failed:
        return ""
    kinds: dict[str, int] = {}
    for message in failed.values():
        kinds[message.split(":")[0]] = kinds.get(message.split(":")[0], 0) + 1
    detail = ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items()))
    return f"{len(failed)} questions failed and were not scored ({detail}); first: {next(iter(failed.items()))[0]} — " \
           f"{next(iter(failed.values()))}"


def save_report(store: RunSink, report: EvalReport, origin: RunOrigin, golden: GoldenSet, *,
                corpus_fingerprint: str | None, name: str = "", by: str = "", corpus_path: str | None = None) -> Any:
    """Save a report with what made it, the golden set and the corpus it was made from; the store's saved run."""
    data = report.to_dict()
    per_query = data.pop("per_query")
    return store.runs.save(origin.to_dict(), summary=data, per_query=per_query, golden_hash=golden_fingerprint(golden),
                          corpus_fingerprint=corpus_fingerprint, config_hash=origin.config_hash,
                          name=name or origin.default_name(), by=by, corpus_path=corpus_path)


def report_of(saved: SavedRun) -> EvalReport:
    """The EvalReport a saved run holds, exactly as it was saved."""
    return EvalReport.from_dict({**saved.summary, "per_query": saved.per_query})


def filled_note(summary: Mapping[str, Any]) -> str | None:
    """One line for a saved run whose numbers a machine judge's grades filled (labeler_app.judges.save_judged):
    the judge, its human-only twin (the run it was scored from, with two of its numbers) and judged@10
    split into people's share and the judge's; None for a run of people's grades alone."""
    machine = (summary.get("settings") or {}).get("machine")
    if not machine:
        return None
    human = machine.get("human_only") or {}
    twin = ", ".join(f"{m} {human[m]:.4f}" for m in ("ndcg@10", "recall@10") if isinstance(human.get(m), (int, float)))
    split = (machine.get("judged") or {}).get("10") or {}
    return (f"holes filled by judge {(machine.get('calibration') or {}).get('judge')}; human-only twin: run "
            f"#{machine.get('run')}" + (f" ({twin})" if twin else "")
            + (f"; judged@10 {split['human']:.2f} by people + {split['machine']:.2f} by the judge" if split else ""))
