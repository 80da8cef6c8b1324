"""`labeler judge COLLECTION --judge NAME_OR_FILE --holes-from RUN [--limit N]`: a machine judge grades
a saved run's holes (the use case of labeler_app.judge_runs, which the Judges page runs too); with
`--judged` instead, the pairs people graded, so that its calibration has pairs to rest on. Also what
`labeler calibrate` reads when its GOLDEN is a collection and its judge a saved one (`stored_pairs`).

The grades go to the machine-grade table, never to the judgments: a pair is graded once per judge,
prompt and content, so a run stopped half-way (Ctrl-C, a crash) and started again grades only
what is left. A pair the judge failed on is listed (and graded on the next run), never a 0.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from labeler.errors import InputError
from labeler_edge.cli import cli, handle_errors
from labeler_edge.cli.golden import DB_HELP, _collection_name

MAX_SHOWN = 20  # failures printed; the rest are counted


def judge_spec(store, value: str):
    """A declaration file (.toml/.json) or the name of a judge saved in the database."""
    from labeler.judges.spec import judge_spec_from_dict, read_judge_spec

    path = Path(value).expanduser()
    if path.suffix.lower() in (".toml", ".json") and path.is_file():
        return read_judge_spec(path)
    saved = store.machine.judge_specs()
    if value not in saved:
        raise InputError(f"--judge {value!r} is neither a declaration file (.toml/.json) nor a saved judge",
                         hint=f"saved judges: {', '.join(sorted(saved)) or '(none yet)'}; declare one on the Judges "
                              "page, or pass a declaration file.")
    return judge_spec_from_dict(saved[value], source=f"saved judge {value!r}")


@dataclass(frozen=True)
class StoredPairs:
    """What `labeler calibrate` reads from the database: people's grades of a collection and, for a judge
    saved by name, its current grades there (None: the judge is a file, read as before)."""

    human: dict[tuple[str, str], int]
    judge: str | None = None
    machine: dict[tuple[str, str], int] | None = None
    post_edit: dict | None = None  # what annotators did with its suggestions there (labeler.judges.post_edit)
    gate: dict | None = None  # the team's bars held against its calibration there (labeler_app.judges.gate)


def stored_pairs(golden: Path, judge: Path, db_url: str | None) -> StoredPairs | None:
    """For `labeler calibrate GOLDEN --judge NAME_OR_FILE`: None when GOLDEN is a golden file (the files'
    path, unchanged). Otherwise GOLDEN names a collection: its people's grades (the golden set's
    `relevance`), and a judge that is not a file is a saved judge whose current (non-stale) grades there
    are read, its name and prompt as `labeler judge` recorded them."""
    from labeler.judges.post_edit import PostEdit
    from labeler_app.judge_runs import collection_calibration, human_pairs, machine_pairs
    from labeler_app.judges import gate, judge_bars
    from labeler_app.suggestions import post_edit
    from labeler_storage import CollectionStore, normalize_db_url, open_store

    if golden.exists():
        return None
    url = normalize_db_url(db_url)
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        raise InputError(f"{golden} is neither a golden file nor a collection (there is no database here yet)",
                         path=str(golden), hint="give a golden JSONL file, or a collection name with --db.")
    with open_store(url) as opened:
        if opened.collections.get(str(golden)) is None:
            raise InputError(f"{golden} is neither a golden file nor a collection of the database",
                             path=str(golden), hint="give a golden JSONL file, or a collection name (see --db).")
        store = CollectionStore(opened, str(golden))
        human = human_pairs(store.golden.export())
        if judge.is_file():
            return StoredPairs(human)
        spec = judge_spec(opened, str(judge))
        edits = post_edit(store, spec.name).get(spec.name, PostEdit(spec.name))
        verdict = gate(collection_calibration(store, spec, bootstrap=0), judge_bars(opened))
        return StoredPairs(human, spec.name,
                           machine_pairs(store.machine.grades(judge=spec.name, prompt_hash=spec.prompt_hash)),
                           edits.to_dict(), {"passes": verdict.passes, "reasons": list(verdict.reasons),
                                             "checks": list(verdict.checks), "line": verdict.line})


def run_id_of(value: str) -> int:
    """A saved run's id, written `3` or `#3`."""
    text = value.strip().lstrip("#")
    if not text.isdigit():
        raise InputError(f"--holes-from {value!r} is not a saved run's id",
                         hint="give the run's number, e.g. --holes-from 3 (see the Evaluate page's history).")
    return int(text)


@cli.command("judge")
@click.argument("collection", callback=_collection_name)
@click.option("--judge", "judge_name", required=True,
              help="A saved judge's name, or a judge declaration file (.toml/.json, any kind).")
@click.option("--holes-from", "holes_from", default=None,
              help="A saved run's id: its top-10 documents that nobody judged are graded.")
@click.option("--judged", is_flag=True,
              help="Grade the pairs people graded instead (what the judge's calibration rests on).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Grade at most N pairs (the first holes).")
@click.option("--corpus", type=click.Path(path_type=Path), default=None,
              help="The corpus the documents' text comes from (default: the one the collection records).")
@click.option("--db", "db_url", default=None, help=DB_HELP)
@handle_errors
def judge_command(collection: str, judge_name: str, holes_from: str | None, judged: bool, limit: int | None,
                  corpus: Path | None, db_url: str | None) -> None:
    """Grade the holes of a saved run of COLLECTION with a machine judge, or (--judged) the pairs people
    graded (resumable; failures listed)."""
    from labeler.corpus import load_corpus
    from labeler.judges import make_judge
    from labeler_app.judge_runs import hole_pairs, judge_pairs, judged_pairs
    from labeler_edge.cli.retrieval import ProgressBar
    from labeler_storage import CollectionStore, open_store

    if (holes_from is None) == (not judged):
        raise InputError("give either --holes-from RUN (a run's holes) or --judged (the pairs people graded)",
                         hint="e.g. --holes-from 3, or --judged to grade what the calibration rests on.")
    run_id = run_id_of(holes_from) if holes_from is not None else None
    with open_store(db_url) as opened:
        found = opened.collections.get(collection)
        if found is None:
            raise InputError(f"no collection named {collection!r}", hint="see the collections with the app, or "
                                                                         "`labeler import` a golden set first.")
        store = CollectionStore(opened, collection)
        spec = judge_spec(opened, judge_name)
        where = corpus or (Path(found.corpus_path) if found.corpus_path else None)
        if where is None:
            raise InputError(f"collection {collection!r} records no corpus to read the documents from",
                             hint="pass --corpus PATH.")
        docs = load_corpus(where)
        if found.version_fingerprint and docs.fingerprint != found.version_fingerprint:
            click.echo(f"Note: {where} is not the corpus version collection {collection!r} records: grades of "
                       "documents that differ from it will show as stale.", err=True)
        pairs, missing = (judged_pairs(store, docs, limit=limit) if run_id is None
                          else hole_pairs(store, run_id, docs, limit=limit))
        bar = ProgressBar()
        try:
            with make_judge(spec) as judge:
                done = judge_pairs(store, judge, spec, pairs, progress=bar, missing=missing)
        finally:
            bar.close()
    what = f"the holes of run #{run_id}" if run_id is not None else "the pairs people graded"
    click.echo(f"{done.line} ({what}, collection {collection!r}).")
    for f in done.failures[:MAX_SHOWN]:
        click.echo(f"  failed {f.query_id} {f.doc_id}: {f.error}", err=True)
    if len(done.failures) > MAX_SHOWN:
        click.echo(f"  ... and {len(done.failures) - MAX_SHOWN} more failures", err=True)
    if done.failures:
        click.echo("Note: failed pairs got no grade; run the command again to retry them.", err=True)
    for query_id, doc_id in done.missing[:MAX_SHOWN]:
        click.echo(f"  not in the corpus {query_id} {doc_id}", err=True)
