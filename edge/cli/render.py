"""What the CLI prints without --json: a report or a comparison as aligned text tables."""
from __future__ import annotations

import math
from typing import Sequence


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


def _judged_name(metric: str, measures: Sequence[str]) -> str | None:
    """"judged@k" for a metric cut at k when the report computed it, else None."""
    _, at, k = metric.partition("@")
    return f"judged@{k}" if at and f"judged@{k}" in measures and not metric.startswith("judged@") else None


def metric_rows(measures: Sequence[str]) -> list[str]:
    """The measures shown as rows: judged@k moves into the judged@k column of the metrics cut at k."""
    cut = {m.partition("@")[2] for m in measures if "@" in m and not m.startswith("judged@")}
    return [m for m in measures if not (m.startswith("judged@") and m.partition("@")[2] in cut)]


def _coverage_cell(report, metric: str) -> str:
    if "@" not in metric or metric.startswith("judged@"):
        return ""
    name = _judged_name(metric, report.measures)
    return _fmt(report.metrics.get(name) if name else None).strip()


def _failed_lines(failed: dict[str, str], shown: int = 20) -> list[str]:
    """The questions the system failed on, each with its error: left out of every mean, never a miss."""
    if not failed:
        return []
    lines = [f"{len(failed)} questions failed and were not scored (left out of every mean, not counted as misses):"]
    lines += [f"  {q}  {error}" for q, error in list(failed.items())[:shown]]
    if len(failed) > shown:
        lines.append(f"  ... and {len(failed) - shown} more (all of them in --json, settings.failed)")
    return lines


def render_report(report, *, cutoffs: Sequence[int], worst_by: str | None = None, n_worst: int = 5) -> str:
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
    out += _failed_lines((report.settings or {}).get("failed") or {})
    out.append("")
    rows = [(m, _fmt(report.metrics[m]), f"[{_fmt(report.ci95[m][0]).strip()}, {_fmt(report.ci95[m][1]).strip()}]",
             _coverage_cell(report, m)) for m in metric_rows(report.measures)]
    out += _table(("metric", "mean", "95% CI", "judged@k"), rows)
    out.append("judged@k: share of the top k that has a judgment (unjudged documents count as not relevant)")

    if report.per_type:
        columns = [m for m in (f"recall@{k}", f"ndcg@{k}", "mrr", f"judged@{k}") if m in report.measures]
        out += ["", "By query type:"]
        out += _table(("type", "n", *columns),
                      [(t, str(report.type_counts[t]), *(_fmt(v[m]) for m in columns)) for t, v in report.per_type.items()])

    worst = report.worst(worst_by, n_worst) if c["answerable"] else ()
    if worst:
        out += ["", f"Worst {len(worst)} questions by {worst_by}:"]
        judged_name = _judged_name(worst_by, report.measures)

        def judged_cell(r) -> tuple[str, ...]:
            return (_fmt(r.metrics.get(judged_name)).strip(),) if judged_name else ()

        rows = []
        for r in worst:
            text = report.questions.get(r.query_id, "")
            text = text if len(text) <= 60 else text[:57] + "..."
            rank = "never" if r.first_relevant_rank is None else str(r.first_relevant_rank)
            rows.append((r.query_id, _fmt(r.metrics[worst_by]), rank, *judged_cell(r), text))
        header = ("query_id", worst_by, "first relevant rank", *([judged_name] if judged_name else []), "question")
        out += _table(header, rows, left=(0, len(header) - 1))

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


