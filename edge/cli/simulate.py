"""`labeler simulate`: replay judging on a collection with full judgments, an oracle grading from its qrels."""
from __future__ import annotations

import json
from pathlib import Path

import click

from labeler.errors import ConfigError
from labeler_edge.cli import cli, handle_errors


def _positive(ctx, param, value):
    if value is not None and value < 1:
        raise click.BadParameter(f"{value} is not a positive number of judgments. Hint: e.g. --{param.name} 100.")
    return value


@cli.command("simulate")
@click.argument("collection", type=click.Path(path_type=Path))
@click.option("--strategy", type=click.Choice(["pool", "active"]), default="active", show_default=True,
              help="pool: the Label page's order today (dense top 10 + BM25 top 10); active: most likely "
                   "relevant first, refitted after every grade, from the whole corpus.")
@click.option("--budget", type=int, default=None, callback=_positive,
              help="Judgments per question [default: pool: the whole pool; active: 100].")
@click.option("--stop-sample", type=int, default=20, show_default=True,
              help="active: at the knee, judge a random sample of this many unjudged documents and stop if "
                   "it, or the judged order's gain curve, bound what is left to <= 1 (95%); 0: no stopping estimate.")
@click.option("--patience", type=int, default=10, show_default=True,
              help="active: the knee is this many judgments in a row with nothing relevant.")
@click.option("--allocate", is_flag=True,
              help="active: spread --total judgments over the questions, every question's first 10, then 10 at a "
                   "time to the question whose last 10 found the most relevant (no stopping estimate; --budget: "
                   "the most per question).")
@click.option("--total", type=int, default=None, callback=_positive,
              help="With --allocate: judgments in all [default: as many as the whole pool].")
@click.option("--runs", "run_files", multiple=True, type=click.Path(path_type=Path),
              help="TREC run files: Kendall tau of their nDCG@10 order, judgments so far vs full qrels. "
                   "Repeatable; several names after one --runs are also taken.")
@click.option("--keep-scale", is_flag=True, help="Keep the qrels' own grade scale (Cranfield's -1, 1..4).")
@click.option("--min-grade", type=click.IntRange(min=1), default=1, show_default=True,
              help="Relevant means grade >= this.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (judged orders and summary).")
@click.argument("more_runs", nargs=-1, type=click.Path(path_type=Path))
@handle_errors
def simulate_command(collection: Path, strategy: str, budget: int | None, stop_sample: int, patience: int,
                     allocate: bool, total: int | None, run_files: tuple[Path, ...], keep_scale: bool, min_grade: int, as_json: bool,
                     more_runs: tuple[Path, ...]) -> None:
    """Simulate judging COLLECTION (a BEIR folder with full qrels) with a strategy; an oracle annotator
    grades from the qrels only the documents the strategy asks for."""
    from labeler.judging.run import simulate_collection
    from labeler.runfile import read_run
    from labeler_edge.cli.retrieval import ProgressBar

    if stop_sample < 0 or patience < 1:
        raise ConfigError("--stop-sample must be >= 0 and --patience >= 1",
                          hint="e.g. --stop-sample 20 --patience 10 (or --stop-sample 0 for no estimate).")
    paths = (*run_files, *more_runs)
    if len(paths) == 1:
        raise ConfigError("Kendall tau needs at least two runs", hint="give two or more run files after --runs.")
    runs = {path.name: read_run(path) for path in paths}
    bar = ProgressBar()  # the corpus's first embedding takes minutes: a bar on stderr (a line in a log)
    try:
        result = simulate_collection(collection, strategy, budget=budget, stop_sample=stop_sample, patience=patience,
                                     runs=runs, keep_scale=keep_scale, min_grade=min_grade, allocate=allocate,
                                     total=total, progress=bar)
    finally:
        bar.close()
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
        return
    s = result["summary"]
    click.echo(f"{strategy} on {result['collection']}: {s['questions']} questions, {s['relevant']} relevant; "
               f"{s['judgments']} judgments found {s['relevant_found']}")
    reach = ", ".join(f"{k}: {v if v is not None else 'not reached'}" for k, v in s["judgments_to_reach"].items())
    click.echo(f"judgments to reach the known relevant: {reach}")
    pool = s["pool"]
    if "allocation" in s:  # the per-question pool budget does not apply: the total is spread by yield
        a = s["allocation"]
        click.echo(f"{a['total']} judgments spread over the questions by what each still finds: "
                   f"{a['relevant_found']} relevant (the pool holds {pool['relevant']} in {pool['judgments']})")
    else:
        spent = pool["judgments_within_pool_budget"]
        short = f"; this run made only {spent} of them" if spent < pool["judgments"] else ""
        click.echo(f"at the pool's budget ({pool['judgments']} judgments{short}): "
                   f"{pool['relevant_found_within_pool_budget']} relevant (the pool holds {pool['relevant']})")
    each = pool.get("judgments_to_reach_90%_of_pool_relevant_each")
    if each is not None:
        click.echo(f"each question judged until it has 90% of its pool's relevant: {each['judgments']} judgments"
                   + (f" ({each['not_reached']} questions never got there)" if each["not_reached"] else ""))
    if "stopping" in s:
        st = s["stopping"]
        click.echo(f"stopping estimate: {st['estimated']} questions sampled, {st['done']} said <= 1 left (95%) "
                   f"({st['done_by_model_only']} by the gain curve alone), {st['done_and_at_most_one_left']} "
                   "of them truly had at most one left")
    for point in s.get("tau", []):
        click.echo(f"tau after {point['judgments']} judgments: {point['tau']}")
