"""`labeler calibrate GOLDEN --judge FILE [--runs A.trec ...] [--json]`: how far a judge agrees with people."""
from __future__ import annotations

import json
from pathlib import Path

import click

from labeler.errors import ConfigError, InputError
from labeler_edge.cli import cli, handle_errors

_STATS = ("kappa", "kappa_quadratic", "kappa_binary@1", "kappa_binary@2", "alpha", "bias",
          "kendall_tau", "tau_ap", "kendall_tau_filled", "tau_ap_filled")


def _judgments(path: Path):
    """A judge's grades from a qrels/JSONL file, or from a declaration of kind "file"."""
    from labeler.judges.filejudge import read_judgments
    from labeler.judges.spec import read_judge_spec

    if path.suffix.lower() in (".toml", ".json"):
        spec = read_judge_spec(path)
        if spec.kind != "file":
            raise ConfigError(f"judge {spec.name!r} is of kind {spec.kind!r}; calibrate reads grades already made",
                              path=path, hint="give its grades as a qrels/JSONL file, or a declaration of kind "
                                              '"file" (judge the pairs first, then calibrate the file).')
        return spec.name, read_judgments(spec.params["path"], judge=spec.params.get("judge"))
    judgments = read_judgments(path)
    return judgments.judge or path.name, judgments


def _shown(value) -> str:
    return "n/a" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


@cli.command("calibrate")
@click.argument("golden", type=click.Path(path_type=Path))
@click.option("--judge", "judge_path", required=True, type=click.Path(path_type=Path),
              help="The judge's grades: TREC qrels (query_id 0 doc_id grade) or JSONL, or a file-judge declaration.")
@click.option("--runs", "run_files", multiple=True, type=click.Path(path_type=Path),
              help="TREC run files: Kendall tau and tau_AP of their nDCG@10 order under people's and the judge's "
                   "grades. Repeatable; several names after one --runs are also taken.")
@click.option("--bootstrap", type=click.IntRange(0, 100_000), default=1000, show_default=True,
              help="Bootstrap resamples for the 95% intervals (0: none).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the statistics and ci95).")
@click.option("--db", "db_url", default=None, help="The database when GOLDEN names a collection (and --judge may name a judge saved there).")
@click.argument("more_runs", nargs=-1, type=click.Path(path_type=Path))
@handle_errors
def calibrate_command(golden: Path, judge_path: Path, run_files: tuple[Path, ...], bootstrap: int, seed: int,
                      as_json: bool, db_url: str | None, more_runs: tuple[Path, ...]) -> None:
    """Agreement of a judge's grades with GOLDEN's consensus grades (a golden JSONL file), on every
    (question, document) pair both graded: kappa, weighted and binarized kappa, alpha, the confusion
    matrix, bias, and with --runs the system-ranking agreement (Kendall tau, tau_AP)."""
    from labeler.golden import read_golden
    from labeler.judges.calibration import calibrate
    from labeler.runfile import read_run

    from labeler_edge.cli.judge import stored_pairs  # GOLDEN a collection, the judge a saved one (judgeapp)

    stored = stored_pairs(golden, judge_path, db_url)
    if stored is None:
        gold = read_golden(golden)
        human = {(q.query_id, doc): grade for q in gold for doc, grade in q.relevance.items()}
    else:
        human = stored.human
    if stored is not None and stored.machine is not None:
        name, machine, n_failed = stored.judge, stored.machine, 0
    else:
        name, judgments = _judgments(judge_path)
        machine, n_failed = judgments.grades(), len(judgments.failures)
    paths = (*run_files, *more_runs)
    if len(paths) == 1:
        raise ConfigError("Kendall tau needs at least two runs", hint="give two or more run files after --runs.")
    names = [p.name for p in paths]
    runs = {(str(p) if names.count(p.name) > 1 else p.name): read_run(p) for p in paths}
    if not set(human) & set(machine):
        raise InputError(f"no (question, document) pair has both a grade in {golden} and one in {judge_path}",
                         hint="check that the judge's query and doc ids are the golden set's.")
    result = calibrate(human, machine, runs or None, bootstrap=bootstrap, seed=seed)
    edits = stored.post_edit if stored is not None and stored.machine is not None else None
    if as_json:  # post_edit: what annotators did with a saved judge's suggestions (null for a file judge)
        click.echo(json.dumps({**result.to_dict(), "post_edit": edits}, ensure_ascii=False))
        return
    click.echo(f"judge {name} against {golden}: {result.pairs} pairs graded by both, over {result.questions} "
               f"questions ({len(human) - result.pairs} human pairs the judge did not grade, "
               f"{n_failed} the judge failed on)")
    for stat in _STATS:
        value = result.value(stat)
        if stat.startswith(("kendall", "tau")) and not runs:
            continue
        lo, hi = result.ci95.get(stat, (None, None))
        interval = f"  95% CI [{_shown(lo)}, {_shown(hi)}]" if lo is not None else ""
        click.echo(f"  {stat:<19} {_shown(value)}{interval}")
    by_grade = ", ".join(f"{g}: {_shown(v)}" for g, v in result.bias_by_grade.items())
    click.echo(f"  bias = mean(judge - human); by human grade: {by_grade}")
    click.echo("confusion (rows: human grade 0-3, columns: judge grade 0-3)")
    click.echo("          " + "".join(f"{g:>7}" for g in range(4)))
    for g, row in enumerate(result.confusion):
        click.echo(f"  human {g} " + "".join(f"{v:>7}" for v in row))
    if edits is not None:
        click.echo(f"suggestions on the Label page: {edits['seen']} seen; post-edited {edits['post_edited']} (kept "
                   f"{edits['kept']}, changed up {edits['changed_up']}, down {edits['changed_down']}, kappa "
                   f"{_shown(edits['kappa_post_edit'])}); blind {edits['blind']} (agreed {edits['agreed']}, revised "
                   f"after seeing {edits['revised']}, kappa {_shown(edits['kappa_blind'])})")
    for run, scores in result.run_scores.items():
        click.echo(f"  {run}: nDCG@10 {scores['human']:.4f} (human) vs {scores['judge']:.4f} (judge) on the pairs; "
                   f"{scores['human_all']:.4f} (all human) vs {scores['filled']:.4f} (holes filled)")
