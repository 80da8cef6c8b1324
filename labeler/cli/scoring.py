"""`labeler score`, `labeler eval` and `labeler compare`.

`score` needs numpy only; `eval` imports the retrieval stack (torch, faiss) inside the command.
`--json` prints the report's `to_dict()` (metrics, ci95, per_type, per_query, counts, ...), which
is also the saved-run format `labeler compare A.json B.json` reads.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

import click

from labeler.cli import EXIT_BAR_MISSED, cli, handle_errors
from labeler.cli.options import config_options
from labeler.errors import ConfigError

DEFAULT_CUTOFFS = "1,3,5,10,100"


# ---------------------------------------------------------------------------------------------
# Option parsing


def parse_cutoffs(text: str) -> tuple[int, ...]:
    """"1,3,5,10" -> (1, 3, 5, 10); a bad value raises ConfigError with a hint."""
    cutoffs = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise ConfigError(f"bad cutoff {part!r} in {text!r}",
                              hint="give positive integers separated by commas, e.g. -k 1,3,5,10.")
        cutoffs.append(int(part))
    if not cutoffs:
        raise ConfigError("no cutoff given", hint="give positive integers separated by commas, e.g. -k 1,3,5,10.")
    return tuple(sorted(set(cutoffs)))


def parse_bars(specs: Sequence[str]) -> list[tuple[str, float]]:
    """["ndcg@10=0.6"] -> [("ndcg@10", 0.6)]: the --fail-under bars."""
    from labeler.metrics import parse_measure

    bars = []
    for spec in specs:
        name, sep, value = spec.partition("=")
        try:
            bar = float(value)
        except ValueError:
            bar = math.nan
        if not sep or math.isnan(bar):
            raise ConfigError(f"bad --fail-under {spec!r}", hint="write METRIC=VALUE, e.g. --fail-under ndcg@10=0.6.")
        bars.append((str(parse_measure(name)), bar))
    return bars


def measures_for(cutoffs: Sequence[int], bars: Sequence[tuple[str, float]]) -> list[str]:
    """The standard measures at these cutoffs, plus any measure a bar names."""
    from labeler.metrics import standard_measures

    names = [str(m) for m in standard_measures(cutoffs)]
    return names + [m for m, _ in bars if m not in names]


def headline_cutoff(cutoffs: Sequence[int]) -> int:
    """The cutoff shown in summaries: 10 when scored, else the largest."""
    return 10 if 10 in cutoffs else max(cutoffs)


def missed_bars(metrics, bars: Sequence[tuple[str, float]]) -> list[str]:
    """One line per bar the report misses (a mean that is missing or below its bar)."""
    lines = []
    for name, bar in bars:
        value = metrics.get(name)
        if value is None or not math.isfinite(value) or value < bar:
            shown = "n/a" if value is None or not math.isfinite(value) else f"{value:.4f}"
            lines.append(f"FAIL {name} = {shown} < {bar:g}")
    return lines


# ---------------------------------------------------------------------------------------------
# Human-readable report


def _fmt(value: float | None) -> str:
    return "   n/a" if value is None or not math.isfinite(value) else f"{value:6.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], *, left: Sequence[int] = (0,)) -> list[str]:
    """Aligned text columns: numbers right-aligned, the `left` columns left-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = (str(c).ljust(w) if i in left else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        return "  ".join(cells).rstrip()

    return [line(header), *(line(r) for r in rows)]


def render_report(report, *, cutoffs: Sequence[int], questions: dict[str, str] | None = None,
                  worst_by: str | None = None, n_worst: int = 5) -> str:
    """The table printed without --json: means with CIs, per type, worst questions, abstention."""
    c = report.counts
    k = headline_cutoff(cutoffs)
    worst_by = worst_by or f"ndcg@{k}"
    out = [
        f"{c['questions']} questions: {c['answerable']} scored, {c['unanswerable']} unanswerable, "
        f"{c['unjudged']} without judgments (not scored)",
        f"{c['missing_from_run']} scored questions missing from the run (scored 0); "
        f"{c['extra_in_run']} run queries not in the golden set (ignored)",
    ]
    if c.get("no_relevant"):
        out.append(f"{c['no_relevant']} scored questions have no relevant document (they score 0)")
    out.append("")
    rows = [(m, _fmt(report.metrics[m]), f"[{_fmt(report.ci95[m][0]).strip()}, {_fmt(report.ci95[m][1]).strip()}]")
            for m in report.measures]
    out += _table(("metric", "mean", "95% CI"), rows)

    if report.per_type:
        columns = [m for m in (f"recall@{k}", f"ndcg@{k}", "mrr") if m in report.measures]
        out += ["", "By query type:"]
        out += _table(("type", "n", *columns),
                      [(t, str(report.type_counts[t]), *(_fmt(v[m]) for m in columns)) for t, v in report.per_type.items()])

    worst = report.worst(worst_by, n_worst) if c["answerable"] else ()
    if worst:
        out += ["", f"Worst {len(worst)} questions by {worst_by}:"]
        rows = []
        for r in worst:
            text = (questions or {}).get(r.query_id, "")
            text = text if len(text) <= 60 else text[:57] + "..."
            rank = "never" if r.first_relevant_rank is None else str(r.first_relevant_rank)
            rows.append((r.query_id, _fmt(r.metrics[worst_by]), rank, text))
        out += _table(("query_id", worst_by, "first relevant rank", "question"), rows, left=(0, 3))

    a = report.abstention
    if a is not None:
        out += ["", f"Abstention on the top score ({a.unanswerable} unanswerable, {a.answerable} answerable questions):"]
        if a.at_threshold is not None:
            out.append(_abstention_line(f"at threshold {a.threshold:g}", a.at_threshold))
        if a.suggested is not None:
            out.append(_abstention_line(f"suggested threshold {a.suggested.threshold:g}", a.suggested))
            out.append(f"  (rule: {a.rule})")
    return "\n".join(out)


def _abstention_line(label: str, point) -> str:
    def pct(x):
        return "n/a" if x is None else f"{100 * x:.0f}%"
    return (f"  {label}: unanswerable correctly left empty {pct(point.unanswerable_abstained)}, "
            f"answerable wrongly left empty {pct(point.answerable_abstained)}")


def render_comparison(comparison, name_a: str, name_b: str) -> str:
    """The paired comparison as a table: B against A."""
    out = [f"B = {name_b}", f"A = {name_a}",
           f"{len(comparison.query_ids)} questions in both; wins/ties/losses are B's; p from a paired "
           f"randomization test ({comparison.settings['resamples']} sign flips)"]
    if comparison.only_in_a or comparison.only_in_b:
        out.append(f"not paired: {len(comparison.only_in_a)} only in A, {len(comparison.only_in_b)} only in B")
    out.append("")
    rows = []
    for name, m in comparison.metrics.items():
        rows.append((name, _fmt(m.mean_a), _fmt(m.mean_b), f"{m.mean_difference:+.3f}",
                     f"[{m.ci95[0]:+.3f}, {m.ci95[1]:+.3f}]", f"{m.wins}/{m.ties}/{m.losses}", f"{m.p_value:.4f}"))
    out += _table(("metric", "A", "B", "B - A", "95% CI", "W/T/L", "p"), rows)
    return "\n".join(out)


def _emit_json(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))


def _finish(report, bars) -> None:
    failures = missed_bars(report.metrics, bars)
    for line in failures:
        click.echo(line, err=True)
    if failures:
        sys.exit(EXIT_BAR_MISSED)


_common_options = [
    click.option("--json", "as_json", is_flag=True, help="Print one JSON object (also the format `compare` reads)."),
    click.option("--min-grade", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Lowest grade counted as relevant (nDCG uses every grade > 0, as trec_eval)."),
    click.option("--keep-scale", is_flag=True,
                 help="Accept a golden file's own grade scale (e.g. Cranfield's -1..4) instead of refusing it."),
    click.option("--fail-under", multiple=True, metavar="METRIC=VALUE",
                 help="Exit 1 when a mean is below its bar, e.g. ndcg@10=0.6 (repeatable)."),
    click.option("--worst-by", default=None, metavar="METRIC", help="Metric for the worst-questions list [ndcg@10]."),
]


def common_options(fn):
    for option in reversed(_common_options):
        fn = option(fn)
    return fn


# ---------------------------------------------------------------------------------------------
# Commands


@cli.command("score")
@click.argument("golden", type=click.Path(exists=True))
@click.argument("run_file", metavar="RUN", type=click.Path(exists=True, dir_okay=False))
@click.option("-k", "--cutoffs", default=DEFAULT_CUTOFFS, show_default=True, help="Metric cutoffs, comma-separated.")
@click.option("--abstain-threshold", type=float, default=None, help="Report abstention at this top-score threshold.")
@common_options
@handle_errors
def score_command(golden: str, run_file: str, cutoffs: str, abstain_threshold: float | None, as_json: bool,
                  min_grade: int, keep_scale: bool, fail_under: tuple[str, ...], worst_by: str | None) -> None:
    """Score a TREC run file (query_id Q0 doc_id rank score tag) against GOLDEN.

    GOLDEN is a golden JSONL file or a BEIR folder (queries.jsonl + qrels/test.tsv).
    """
    from labeler.evaluate import evaluate_golden
    from labeler.golden import read_golden
    from labeler.runfile import read_run

    ks, bars = parse_cutoffs(cutoffs), parse_bars(fail_under)
    golden_set = read_golden(golden, keep_scale=keep_scale)
    run = read_run(Path(run_file))
    report = evaluate_golden(golden_set, run, measures_for(ks, bars), min_grade=min_grade,
                             abstain_threshold=abstain_threshold)
    if as_json:
        _emit_json({**report.to_dict(), "golden": str(golden), "run": str(run_file)})
    else:
        click.echo(render_report(report, cutoffs=ks, questions={q.query_id: q.question for q in golden_set.queries},
                                 worst_by=worst_by and str(_measure(worst_by))))
    _finish(report, bars)


@cli.command("eval")
@click.argument("corpus", type=click.Path(exists=True))
@click.argument("golden", type=click.Path(exists=True))
@click.option("-k", "--top-k", "k", type=click.IntRange(min=1), default=100, show_default=True,
              help="Documents retrieved per question.")
@click.option("--cutoffs", default=DEFAULT_CUTOFFS, show_default=True, help="Metric cutoffs, comma-separated.")
@click.option("--save-run", type=click.Path(dir_okay=False), default=None, help="Also write the ranking as a TREC run file.")
@common_options
@config_options
@handle_errors
def eval_command(corpus: str, golden: str, k: int, cutoffs: str, save_run: str | None, as_json: bool,
                 min_grade: int, keep_scale: bool, fail_under: tuple[str, ...], worst_by: str | None,
                 **options) -> None:
    """Run the live retrieval pipeline on every question of GOLDEN over CORPUS and score it.

    GOLDEN is a golden JSONL file or a BEIR folder (a BEIR folder can be both CORPUS and GOLDEN).
    """
    from labeler.cli.options import config_from_options
    from labeler.evaluate import evaluate_golden
    from labeler.golden import read_golden
    from labeler.runfile import write_run

    ks, bars = parse_cutoffs(cutoffs), parse_bars(fail_under)
    golden_set = read_golden(golden, keep_scale=keep_scale)
    config = config_from_options(options, k=k)
    if max(ks) > config.k:
        click.echo(f"note: cutoff {max(ks)} is deeper than the {config.k} documents retrieved "
                   f"(Hint: pass -k {max(ks)})", err=True)
    run = _retrieve(corpus, config, {q.query_id: q.question for q in golden_set.queries})
    if save_run:
        write_run(save_run, run, tag=f"labeler-{config.config_hash}")
    report = evaluate_golden(golden_set, run, measures_for(ks, bars), min_grade=min_grade,
                             abstain_threshold=config.abstain_threshold)
    if as_json:
        _emit_json({**report.to_dict(), "corpus": str(corpus), "golden": str(golden),
                    "config": config.to_dict(), "config_hash": config.config_hash})
    else:
        click.echo(f"config {config.config_hash}: {config.retriever} retrieval, model {config.model}, "
                   f"index {config.index}, k={config.k}")
        click.echo(render_report(report, cutoffs=ks, questions={q.query_id: q.question for q in golden_set.queries},
                                 worst_by=worst_by and str(_measure(worst_by))))
        if save_run:
            click.echo(f"\nrun written to {save_run}")
    _finish(report, bars)


def _retrieve(corpus: str, config, queries: dict[str, str]) -> dict[str, dict[str, float]]:
    """The live pipeline with progress bars on stderr."""
    from labeler.cli.retrieval import ProgressBar, open_with_progress
    from labeler.retrieval import retrieve_run

    retriever = open_with_progress(corpus, config)
    bar = ProgressBar()
    try:
        return retrieve_run(corpus, config, queries, retriever=retriever, progress=bar)
    finally:
        bar.close()


def _measure(name: str):
    from labeler.metrics import parse_measure

    return parse_measure(name)


@cli.command("compare")
@click.argument("run_a", metavar="A", type=click.Path(exists=True, dir_okay=False))
@click.argument("run_b", metavar="B", type=click.Path(exists=True, dir_okay=False))
@click.option("--golden", type=click.Path(exists=True), default=None,
              help="Score A and B as TREC run files against this golden set (else A and B are saved --json reports).")
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric to compare (repeatable) [all shared].")
@click.option("-k", "--cutoffs", default=DEFAULT_CUTOFFS, show_default=True, help="Cutoffs when scoring run files.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--min-grade", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--keep-scale", is_flag=True)
@handle_errors
def compare_command(run_a: str, run_b: str, golden: str | None, metrics: tuple[str, ...], cutoffs: str,
                    as_json: bool, min_grade: int, keep_scale: bool) -> None:
    """Paired comparison of run B with run A (the baseline) on the same golden set.

    A and B are saved `labeler score --json` / `labeler eval --json` outputs, or TREC run files
    with --golden. Prints per-metric means, B - A with a bootstrap 95% CI, wins/ties/losses and
    a paired randomization test p-value.
    """
    from labeler.evaluate import compare_reports, evaluate_golden, read_report

    if golden is not None:
        from labeler.golden import read_golden
        from labeler.runfile import read_run

        golden_set = read_golden(golden, keep_scale=keep_scale)
        measures = measures_for(parse_cutoffs(cutoffs), [])
        report_a, report_b = (evaluate_golden(golden_set, read_run(Path(p)), measures, min_grade=min_grade,
                                              ci_resamples=0) for p in (run_a, run_b))
    else:
        report_a, report_b = read_report(run_a), read_report(run_b)
    chosen = [str(_measure(m)) for m in metrics] or None
    comparison = compare_reports(report_a, report_b, chosen)
    if as_json:
        _emit_json({"a": str(run_a), "b": str(run_b), **comparison.to_dict()})
    else:
        click.echo(render_comparison(comparison, str(run_a), str(run_b)))
