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


def _golden(path: Path) -> tuple[dict[tuple[str, str], int], set[str]]:
    """People's grades of a golden file (its consensus `relevance`, answerable questions only, as a
    collection's calibration reads them) and its query ids. A TREC qrels file
    given as GOLDEN is named as such in one line; an off-scale grade says calibration needs 0-3."""
    from labeler.errors import GoldenFormatError
    from labeler.golden import read_golden
    from labeler.golden.validation import HINT_SCALE

    from labeler_app.judge_runs import human_pairs

    if path.is_file() and path.suffix.lower() != ".gz":
        with open(path, encoding="utf-8", errors="replace") as f:
            first = next(((n, line) for n, line in enumerate(f, start=1) if line.strip()), None)
        if first is not None and not first[1].lstrip(" \t\ufeff").startswith("{"):
            raise InputError("GOLDEN is not a golden JSONL file: the line is not a JSON object (TREC qrels?)",
                             path=path, line=first[0],
                             hint="GOLDEN is people's grades: a golden JSONL file (labeler export OUT), a BEIR "
                                  "folder (queries.jsonl + qrels/test.tsv) or a collection name; a judge's qrels go "
                                  "after --judge.")
    try:
        gold = read_golden(path)
    except GoldenFormatError as exc:
        if exc.hint == HINT_SCALE:
            exc.hint = "calibration compares grades on the 0-3 scale: map GOLDEN's grades to 0-3 first."
        raise
    # The pairs a collection's calibration reads too (labeler_app.judge_runs): an unanswerable question's are left out.
    return human_pairs(gold), {q.query_id for q in gold}


def _no_overlap(golden: Path, judge: Path, human, machine) -> InputError:
    """No pair graded by both: say whether the ids of the questions or of the documents differ, with examples."""
    shared = {q for q, _ in human} & {q for q, _ in machine}
    if shared:
        q = min(shared)
        what = (f"they share {len(shared)} question{'s' * (len(shared) != 1)} but no document (on {q!r} the "
                f"judge's doc ids are e.g. {min(d for p, d in machine if p == q)!r}, GOLDEN's "
                f"{min(d for p, d in human if p == q)!r})")
    else:
        what = f"no question either (the judge's query ids are e.g. {min(machine)[0]!r}, GOLDEN's {min(human)[0]!r})"
    return InputError(f"no (question, document) pair has both a grade in {golden} and one in {judge}: {what}",
                      hint="check that the judge's query and doc ids are the golden set's.")


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
    from labeler.judges.calibration import calibrate
    from labeler.runfile import read_run

    from labeler_edge.cli.judge import stored_pairs  # GOLDEN a collection, the judge a saved one (judgeapp)

    stored = stored_pairs(golden, judge_path, db_url)
    if stored is None:
        human, questions = _golden(golden)
    else:
        human, questions = stored.human, {q for q, _ in stored.human}
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
    if not human or not machine or not set(human) & set(machine):
        raise _no_overlap(golden, judge_path, human, machine) if human and machine else InputError(
            f"{golden if not human else judge_path} holds no grade",
            hint="calibration needs people's grades and the judge's.")
    elsewhere = sorted({q for q, _ in machine} - questions)
    if elsewhere:  # a partial id mismatch would otherwise only shrink the pairs, unsaid
        n = sum(q not in questions for q, _ in machine)
        click.echo(f"Warning: {n} of the judge's {len(machine)} grades are of {len(elsewhere)} "
                   f"question{'s' * (len(elsewhere) != 1)} GOLDEN lacks "
                   f"(e.g. {elsewhere[0]!r}): they count nowhere. Hint: check that the judge's query ids are "
                   "GOLDEN's.", err=True)
    graded = {q for q, _ in human}  # an unanswerable question's pairs are neither pairs nor holes
    holes = sum(k[0] in graded and k not in human for k in machine)
    result = calibrate(human, machine, runs or None, bootstrap=bootstrap, seed=seed)
    edits = stored.post_edit if stored is not None and stored.machine is not None else None
    verdict = stored.gate if stored is not None and stored.machine is not None else None
    if as_json:  # post_edit, gate: what annotators did with a saved judge's suggestions, the team's bars on it
        click.echo(json.dumps({**result.to_dict(), "post_edit": edits, "gate": verdict}, ensure_ascii=False))
        return
    click.echo(f"judge {name} against {golden}: {result.pairs} pairs graded by both, over {result.questions} "
               f"questions ({len(human) - result.pairs} human pairs the judge did not grade, "
               f"{n_failed} the judge failed on; {holes} of its grades of pairs no person graded: holes, used "
               "only by the *_filled taus)")
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
    if verdict is not None:  # as the Judges page decides it: the collection's saved runs for tau, not --runs
        click.echo(f"gate (the team's bars, with the collection's saved runs): {verdict['line']}")
    for run, scores in result.run_scores.items():
        click.echo(f"  {run}: nDCG@10 {scores['human']:.4f} (human) vs {scores['judge']:.4f} (judge) on the pairs; "
                   f"{scores['human_all']:.4f} (all human) vs {scores['filled']:.4f} (holes filled)")
