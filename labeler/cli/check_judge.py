"""`labeler check-judge JUDGE GOLDEN CORPUS`: the judge's own stability before anyone trusts it."""
from __future__ import annotations

import json
import random
from pathlib import Path

import click

from labeler.cli import cli, handle_errors
from labeler.errors import InputError


def sample_pairs(golden, corpus, n: int, seed: int):
    """Up to `n` of the golden set's graded pairs whose document the corpus has (seeded sample)."""
    from labeler.judges import JudgePair

    keys = sorted((q.query_id, d) for q in golden for d in q.relevance if corpus.get(d) is not None)
    chosen = sorted(random.Random(seed).sample(keys, min(n, len(keys))))
    questions = golden.questions()
    return [JudgePair.of_document(q, questions[q], corpus.get(d)) for q, d in chosen]


def _shown(agreement) -> dict:
    return {"pairs": agreement.pairs, "same": agreement.same, "kappa": agreement.kappa,
            "mean_shift": agreement.mean_shift, "failures": agreement.failures,
            "changed": [list(c) for c in agreement.changed]}


@cli.command("check-judge")
@click.argument("judge_file", type=click.Path(path_type=Path))
@click.argument("golden", type=click.Path(path_type=Path))
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--pairs", "n_pairs", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="How many of GOLDEN's graded pairs to judge (a seeded sample).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--system", "systems", multiple=True, type=click.Path(path_type=Path),
              help="A system under test (declaration file): warn if it uses the judge's model. Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@handle_errors
def check_judge_command(judge_file: Path, golden: Path, corpus: Path, n_pairs: int, seed: int,
                        systems: tuple[Path, ...], as_json: bool) -> None:
    """Judge a sample of GOLDEN's pairs twice (run-to-run agreement), and for a prompt judge once more
    with the document before the question (position); warn when a --system uses the judge's model."""
    from labeler.corpus import load_corpus
    from labeler.golden import read_golden
    from labeler.judges import make_judge, read_judge_spec
    from labeler.judges.checks import circular_models, position_check, run_to_run
    from labeler.systems import load_system

    spec = read_judge_spec(judge_file)
    warnings = circular_models(spec, [load_system(path).describe() for path in systems])
    pairs = sample_pairs(read_golden(golden), load_corpus(corpus), n_pairs, seed)
    if not pairs:
        raise InputError(f"no graded pair of {golden} has its document in {corpus}",
                         hint="give the corpus the golden set was judged on.")
    with make_judge(spec) as judge:
        again = run_to_run(judge, pairs)
    moved = position_check(spec, pairs) if spec.kind == "openai" else None
    if as_json:
        click.echo(json.dumps({"judge": spec.name, "run_to_run": _shown(again),
                               "document_first": _shown(moved) if moved else None, "warnings": warnings}))
        return
    for what, a in (("run to run (same pairs twice)", again), ("document before the question", moved)):
        if a is None:
            continue
        kappa = "n/a" if a.kappa is None else f"{a.kappa:.3f}"
        shift = "n/a" if a.mean_shift is None else f"{a.mean_shift:+.3f}"
        click.echo(f"{what}: {a.same} of {a.pairs} pairs kept their grade (kappa {kappa}, mean shift {shift}), "
                   f"{a.failures} failures")
        for query_id, doc_id, first, second in a.changed[:10]:
            click.echo(f"  {query_id} {doc_id}: {first} -> {second}")
    for warning in warnings:
        click.echo(f"Warning: {warning}", err=True)
