"""`labeler score`, `labeler eval` and `labeler compare`: thin over `labeler_app.runs`, the one
evaluation use case the app shares.

`score` needs numpy only; `eval` imports the retrieval stack (torch, faiss) inside the command.
`--json` prints the report's `to_dict()` (metrics, ci95, per_type, per_query, counts, abstention,
settings, questions), which is also the saved-report format `labeler compare A.json B.json` reads.
judged@k is computed beside every metric cutoff (bars included). `compare --fail-if-worse METRIC`
is the CI gate: exit 1 on a drop beyond noise or on judged@k below --min-judged.
"""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from labeler.errors import InputError, LabelerError
from labeler_edge.cli import EXIT_BAR_MISSED, EXIT_OK, cli, handle_errors
from labeler_edge.cli.options import PIPELINE_ONLY, config_options
from labeler_edge.cli.params import CUTOFFS_TEXT, cutoffs_options, depth_option, parse_bars, resolve_cutoffs
from labeler_edge.cli.render import missed_bars, render_comparison, render_report


def _emit_json(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))


def _finish(report, bars) -> None:
    failures = missed_bars(report.metrics, bars)
    for line in failures:
        click.echo(line, err=True)
    if failures:
        sys.exit(EXIT_BAR_MISSED)


@contextmanager
def _located(path: str, *errors: type[LabelerError]):
    """Name `path` in a refusal the core raised without knowing which file it came from."""
    try:
        yield
    except errors as exc:
        raise type(exc)(exc.message, path=path, hint=exc.hint) from None


def _measure(name: str) -> str:
    from labeler.metrics import parse_measure

    return str(parse_measure(name))


def _extra(names) -> list[str]:
    """Measures asked for beyond the cutoffs (bars, a gated metric), each with its judged@k."""
    from labeler.metrics import with_coverage

    return [str(m) for m in with_coverage(names)]


_common_options = [
    click.option("--json", "as_json", is_flag=True, help="Print one JSON object (also the format `compare` reads)."),
    click.option("--min-grade", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Lowest grade counted as relevant (nDCG uses every grade > 0, as trec_eval)."),
    click.option("--keep-scale", is_flag=True,
                 help="Accept a golden file's own grade scale (e.g. Cranfield's -1..4) instead of refusing it."),
    click.option("--fail-under", multiple=True, metavar="METRIC=VALUE",
                 help="Exit 1 when a mean is below its bar, e.g. ndcg@10=0.6 (repeatable)."),
    click.option("--worst-by", default=None, metavar="METRIC", help="Metric for the worst-questions list [ndcg@10]."),
    click.option("-m", "--metric", "metrics", multiple=True, metavar="METRIC",
                 help="Also report this metric (repeatable), e.g. ndcg_condensed@10 or map@10."),
    click.option("--allow-missing", is_flag=True,
                 help="Score even a run sharing no question with GOLDEN, or a GOLDEN whose judged documents are "
                      "(nearly) all missing from CORPUS, instead of refusing (exit 2): every metric would be ~0."),
]


def common_options(fn):
    """The options `score` and `eval` share."""
    for option in reversed(_common_options):
        fn = option(fn)
    return fn


@cli.command("score")
@click.argument("golden", type=click.Path(exists=True))
@click.argument("run_file", metavar="RUN", type=click.Path(exists=True, dir_okay=False))
@cutoffs_options
@click.option("--abstain-threshold", type=float, default=None, help="Report abstention at this top-score threshold.")
@common_options
@handle_errors
def score_command(golden: str, run_file: str, cutoffs: str | None, old_cutoffs: str | None,
                  abstain_threshold: float | None, as_json: bool, min_grade: int, keep_scale: bool,
                  fail_under: tuple[str, ...], worst_by: str | None, metrics: tuple[str, ...],
                  allow_missing: bool) -> None:
    """Score a TREC run file (query_id Q0 doc_id rank score tag) against GOLDEN.

    GOLDEN is a golden JSONL file or a BEIR folder (queries.jsonl + qrels/test.tsv).
    """
    from labeler.golden import read_golden
    from labeler.runfile import read_run
    from labeler_app.runs import NoJudgmentsError, NoSharedQuestionError, require_judgments, score_run, thin_judgments_line

    ks, bars = resolve_cutoffs(cutoffs, old_cutoffs), parse_bars(fail_under)
    golden_set = read_golden(golden, keep_scale=keep_scale)
    if not allow_missing:  # every metric would be n/a
        with _located(golden, NoJudgmentsError):
            require_judgments(golden_set)
    extra = _extra([*metrics, *(m for m, _ in bars)])
    with _located(run_file, NoSharedQuestionError):
        report = score_run(golden_set, read_run(Path(run_file)), cutoffs=ks, extra=extra, min_grade=min_grade,
                           abstain_threshold=abstain_threshold, allow_missing=allow_missing)
    if line := thin_judgments_line(report):
        click.echo(f"warning: {line}", err=True)
    if as_json:
        _emit_json({**report.to_dict(), "golden": str(golden), "run": str(run_file)})
    else:
        click.echo(render_report(report, cutoffs=ks, worst_by=worst_by and _measure(worst_by)))
    _finish(report, bars)


@cli.command("eval")
@click.argument("corpus", type=click.Path(exists=True))
@click.argument("golden", type=click.Path(exists=True))
@depth_option(100)
@click.option("--cutoffs", default=None, metavar="K,K,...", help=f"Metric cutoffs, comma-separated [{CUTOFFS_TEXT}].")
@click.option("--save-ranking", "--save-run", "save_run", type=click.Path(dir_okay=False), default=None,
              help="Also write the ranking file (TREC run format); --save-run is its old name.")
@click.option("--system", "system_source", default=None, metavar="FILE_OR_NAME",
              help="Score another search system instead of the built-in pipeline: an endpoint declaration "
                   "(.toml/.json), a TREC run file, package.module:function, or the name of a system saved in "
                   "the app (with --db).")
@click.option("--db", "db_url", default=None, help="The database holding saved systems (for --system NAME).")
@click.option("--stale", type=click.Choice(["include", "exclude", "fail"]), default="include", show_default=True,
              help="Judgments whose document is missing from CORPUS or changed since judged: score them "
                   "(with a warning), leave them out, or refuse to score (exit 1).")
@common_options
@config_options
@handle_errors
def eval_command(corpus: str, golden: str, depth: int, cutoffs: str | None, save_run: str | None,
                 system_source: str | None, db_url: str | None, stale: str, as_json: bool,
                 min_grade: int, keep_scale: bool, fail_under: tuple[str, ...], worst_by: str | None,
                 metrics: tuple[str, ...], allow_missing: bool, **options) -> None:
    """Run the live retrieval pipeline on every question of GOLDEN over CORPUS and score it.

    GOLDEN is a golden JSONL file or a BEIR folder (a BEIR folder can be both CORPUS and GOLDEN).
    """
    from labeler.corpus import load_corpus
    from labeler.corpus.versions import golden_staleness
    from labeler.evaluation.stale import MissingDocumentsError, refuse_missing, stale_line
    from labeler.golden import read_golden
    from labeler.runfile import write_run
    from labeler_app.runs import (
        NoJudgmentsError, NoSharedQuestionError, evaluate_retriever, evaluate_system, failed_line, require_judgments,
        thin_judgments_line,
    )
    from labeler_edge.cli.options import config_from_options
    from labeler_edge.cli.retrieval import ProgressBar, open_with_progress

    ks, bars = resolve_cutoffs(cutoffs, None), parse_bars(fail_under)
    if system_source is not None:
        _refuse_pipeline_options(click.get_current_context(), system_source)
    golden_set = read_golden(golden, keep_scale=keep_scale)
    if not allow_missing:  # before the corpus is read: every metric would be n/a
        with _located(golden, NoJudgmentsError):
            require_judgments(golden_set)
    abstain_threshold = options.get("abstain_threshold")
    config = config_from_options(options, k=depth)
    if max(ks) > config.k:
        click.echo(f"note: cutoff {max(ks)} is deeper than the {config.k} documents retrieved "
                   f"(Hint: pass -k {max(ks)})", err=True)
    loaded = load_corpus(corpus)
    if not allow_missing:  # before any index is built: a golden set for another corpus scores nothing
        with _located(golden, MissingDocumentsError):
            refuse_missing(golden_staleness(golden_set, loaded))
    system = None
    if system_source is not None:
        system = _system(system_source, db_url)
        bar = ProgressBar()
        try:
            with _located(system_source, NoSharedQuestionError):
                answered, report = evaluate_system(golden_set, system, k=config.k, corpus=loaded,
                                                   cutoffs=ks, extra=_extra([*metrics, *(m for m, _ in bars)]),
                                                   min_grade=min_grade, stale=stale, progress=bar,
                                                   abstain_threshold=abstain_threshold, allow_missing=allow_missing)
        finally:
            bar.close()
            system.close()
        run = answered.run()
        if line := failed_line(report):
            click.echo(f"warning: {line}", err=True)
    else:
        retriever = open_with_progress(corpus, config)
        bar = ProgressBar()
        try:
            run, report = evaluate_retriever(golden_set, retriever, config, cutoffs=ks,
                                             extra=_extra([*metrics, *(m for m, _ in bars)]), min_grade=min_grade,
                                             progress=bar, stale=stale, allow_missing=allow_missing)
        finally:
            bar.close()
    for line in (stale_line(report.settings), thin_judgments_line(report)):
        if line:
            click.echo(f"warning: {line}", err=True)
    if save_run:
        write_run(save_run, run, tag=_run_tag(system) if system is not None else f"labeler-{config.config_hash}")
    described = system.describe() if system is not None else None
    if as_json:
        _emit_json({**report.to_dict(), "corpus": str(corpus), "golden": str(golden),
                    **({"system": described} if described else {"config": config.to_dict(),
                                                                 "config_hash": config.config_hash})})
    else:
        if described:
            click.echo(f"system {system.name} ({described.get('kind')}), k={config.k}")
        else:
            click.echo(f"config {config.config_hash}: {config.mode} retrieval, model {config.model}, "
                       f"index {config.index}, k={config.k}")
        click.echo(render_report(report, cutoffs=ks, worst_by=worst_by and _measure(worst_by)))
        if save_run:
            click.echo(f"\nranking file written to {save_run}")
    _finish(report, bars)


def _system(source: str, db_url: str | None):
    """The system --system names: a file or module:function, else a system saved in the app's database."""
    from labeler.systems import load_system, system_from_dict

    if Path(source).exists() or ":" in source or db_url is None and "." in source:
        return load_system(source)
    from labeler_app.systems import check_env, saved_systems
    from labeler_storage import normalize_db_url, open_store

    store = open_store(normalize_db_url(db_url))
    try:
        saved = saved_systems(store)  # as the Evaluate page reads them
    finally:
        store.close()
    if source not in saved:
        raise InputError(f"no system file or saved system named {source!r}",
                         hint=f"saved systems: {', '.join(sorted(saved)) or '(none)'}; or give a .toml/.json "
                              "declaration, a TREC run file or package.module:function.")
    system = system_from_dict(saved[source]["declaration"], source=f"saved system {source!r}")
    check_env(system.spec)  # declared in the app: the variables it reads must still be offered (LABELER_SYSTEM_ENV)
    return system


def _refuse_pipeline_options(ctx: click.Context, source: str) -> None:
    """The built-in pipeline's options (all but -k and --abstain-threshold) mean nothing to another
    system: given with --system, they are refused rather than silently ignored."""
    from click.core import ParameterSource

    from labeler.errors import ConfigError

    given = [p for p in ctx.command.params if p.name in PIPELINE_ONLY
             and ctx.get_parameter_source(p.name) not in (None, ParameterSource.DEFAULT)]
    if given:
        names = ", ".join(p.opts[0] for p in given)
        raise ConfigError(f"{names} set{'s' if len(given) == 1 else ''} up the built-in pipeline; --system {source} "
                          "retrieves on its own", hint="leave them out, or leave out --system to score the pipeline.")


def _run_tag(system) -> str:
    """A run tag naming the system that made the run (TREC tags hold no whitespace)."""
    name = "".join(c if c.isalnum() or c in "-_.:" else "-" for c in system.name) or system.kind
    return f"{system.kind}-{name}"


@cli.command("compare")
@click.argument("run_a", metavar="BASE", type=click.Path(exists=True, dir_okay=False))
@click.argument("run_b", metavar="NEW", type=click.Path(exists=True, dir_okay=False))
@click.option("--golden", type=click.Path(exists=True), default=None,
              help="Score BASE and NEW as TREC run files against this golden set (else they are saved --json reports).")
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric to compare (repeatable) [all shared].")
@cutoffs_options
@click.option("--fail-if-worse", "gated", default=None, metavar="METRIC",
              help="CI gate: exit 1 when NEW's mean of METRIC is lower and the paired randomization test "
                   "gives p < --alpha (a drop beyond noise), e.g. ndcg@10.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of the gate.")
@click.option("--min-judged", type=click.FloatRange(0, 1), default=None, metavar="SHARE",
              help="Gate: also exit 1 when judged@k (k of METRIC) of BASE or NEW is below SHARE, e.g. 0.8.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--min-grade", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--keep-scale", is_flag=True)
@click.option("--allow-missing", is_flag=True, help="With --golden: score a run sharing no question with it anyway.")
@handle_errors
def compare_command(run_a: str, run_b: str, golden: str | None, metrics: tuple[str, ...], cutoffs: str | None,
                    old_cutoffs: str | None, gated: str | None, alpha: float, min_judged: float | None, as_json: bool,
                    min_grade: int, keep_scale: bool, allow_missing: bool) -> None:
    """Paired comparison of run NEW with run BASE (the baseline) on the same golden set.

    BASE and NEW are saved `labeler score --json` / `labeler eval --json` outputs, or TREC run files
    with --golden. Prints per-metric means, NEW - BASE with a bootstrap 95% CI, wins/ties/losses and
    a paired randomization test p-value. With --fail-if-worse METRIC it is a CI gate instead: one or
    two lines say PASS or FAIL and why; exit 1 on FAIL, 2 on a bad or incomplete file.
    """
    from labeler.evaluation import compare_reports, read_report
    from labeler.evaluation.gate import gate

    ks = resolve_cutoffs(cutoffs, old_cutoffs)
    if min_judged is not None and gated is None:
        from labeler.errors import ConfigError

        raise ConfigError("--min-judged is part of the gate", hint="give it with --fail-if-worse METRIC.")
    gated = gated and _measure(gated)
    if golden is not None:
        from labeler.golden import read_golden
        from labeler.runfile import read_run
        from labeler_app.runs import NoSharedQuestionError, score_run

        golden_set = read_golden(golden, keep_scale=keep_scale)
        extra = _extra([gated] if gated else [])
        reports = []
        for path in (run_a, run_b):
            with _located(path, NoSharedQuestionError):
                reports.append(score_run(golden_set, read_run(Path(path)), cutoffs=ks, extra=extra,
                                         min_grade=min_grade, ci_resamples=0, allow_missing=allow_missing))
        report_a, report_b = reports
    else:
        report_a, report_b = read_report(run_a), read_report(run_b)
    if gated is None:
        given = cutoffs is not None or old_cutoffs is not None
        shown = [_measure(m) for m in metrics] or (_at_cutoffs(report_a, report_b, ks) if given else None)
        comparison = compare_reports(report_a, report_b, shown)
        if as_json:
            _emit_json({"a": str(run_a), "b": str(run_b), **comparison.to_dict()})
        else:
            click.echo(render_comparison(comparison, str(run_a), str(run_b)))
        return
    verdict = gate(report_a, report_b, gated, alpha=alpha, min_judged=min_judged, base_source=str(run_a),
                   new_source=str(run_b))
    if as_json:
        shown = [_measure(m) for m in metrics] or [gated, verdict.coverage_metric]
        comparison = compare_reports(report_a, report_b,
                                     [m for m in shown if m in report_a.metrics and m in report_b.metrics])
        _emit_json({"a": str(run_a), "b": str(run_b), **comparison.to_dict(), "gate": verdict.to_dict()})
        for line in verdict.lines():
            click.echo(line, err=True)
    else:
        if metrics:
            click.echo(render_comparison(compare_reports(report_a, report_b, [_measure(m) for m in metrics]),
                                         str(run_a), str(run_b)) + "\n")
        for line in verdict.lines():
            click.echo(line)
    sys.exit(EXIT_OK if verdict.passed else EXIT_BAR_MISSED)


def _at_cutoffs(report_a, report_b, ks: tuple[int, ...]) -> list[str]:
    """The measures both reports hold at the cutoffs asked for (`compare --cutoffs`) and those with no
    cutoff (MRR, MAP), in the order `score` reports them; a ConfigError when none is at those cutoffs."""
    from labeler.errors import ConfigError
    from labeler.metrics import parse_measure
    from labeler_app.runs import measures_for

    held = [m for m in report_a.measures if m in report_b.measures]
    cut = {m: parse_measure(m).cutoff for m in held}
    shown = [m for m in measures_for(ks) if m in cut and cut[m] in (None, *ks)]
    if not any(cut[m] is not None for m in shown):
        scored = sorted({c for c in cut.values() if c is not None})
        raise ConfigError(f"the reports hold no metric at cutoff {','.join(map(str, ks))} "
                          f"(they were scored at {','.join(map(str, scored)) or 'no cutoff'})",
                          hint="pick from those cutoffs, or score the runs again with these --cutoffs.")
    return shown
