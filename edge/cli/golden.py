"""`labeler import` and `labeler export`: golden sets between files and the database.

The file is read and validated completely before the database is opened, so a bad file
leaves the database untouched; the import itself is one transaction.
"""
from __future__ import annotations

import os
from pathlib import Path

import click

from labeler.errors import GoldenFormatError, ImportConflictError, InputError
from labeler_edge.cli import UserError, cli, handle_errors

ON_CONFLICT = ("new", "skip", "replace")  # labeler_storage.golden_io.ON_CONFLICT (the CLI starts without importing storage)
MAX_SHOWN = 20  # bad lines printed; the rest are counted
DB_HELP = ("Database URL (postgresql://… or sqlite:///…) or SQLite file (default: $LABELER_DB_URL, else "
           "$LABELER_HOME/labeler.db, i.e. .labeler/ in the cwd).")


def _collection_name(ctx, param, value: str) -> str:
    """A collection name follows the id policy (it is a key in files and URLs too)."""
    from labeler.ids import id_problem

    problem = id_problem(value, "collection name")
    if problem:
        raise click.BadParameter(f"{problem.encode('utf-8', 'backslashreplace').decode()}. "
                                 "Hint: use letters, digits, '-' or '_'.")
    return value


@cli.command("import")
@click.argument("golden", type=click.Path(path_type=Path))
@click.option("--corpus", type=click.Path(path_type=Path), default=None,
              help="Corpus the doc ids must come from (JSONL, CSV, folder, BEIR folder); unknown ids are errors.")
@click.option("--collection", default="default", show_default=True, callback=_collection_name,
              help="Collection to import into.")
@click.option("--db", "db_url", default=None, help=DB_HELP)
@click.option("--keep-scale", is_flag=True,
              help="Keep grades outside 0-3 (e.g. Cranfield's -1 and 1-4) instead of refusing the file.")
@click.option("--dry-run", is_flag=True, help="Print which questions are new, identical or conflicting; write nothing.")
@click.option("--on-conflict", type=click.Choice(ON_CONFLICT), default=None,
              help="Questions whose id the collection holds with other text or grades: import them as new "
                   "questions (fresh ids, the file's id kept as source_id), skip them, or replace them (the "
                   "replaced text and grades go to the history). Without it, conflicts refuse the import.")
@click.option("--count-file-grades/--keep-file-grades-apart", "count_file_grades", default=True, show_default=True,
              help="A consensus-only file's grades (no `annotations`) are kept as this file's own source: count "
                   "them in the consensus where no person graded a document (never over a person's grade), or "
                   "keep them apart (counted nowhere until `labeler sources count`).")
@handle_errors
def import_command(golden: Path, corpus: Path | None, collection: str, db_url: str | None, keep_scale: bool,
                   dry_run: bool, on_conflict: str | None, count_file_grades: bool) -> None:
    """Import GOLDEN (a golden JSONL file or a BEIR folder) into the database, all or nothing."""
    from labeler_app.transfer import file_grades_line, import_golden_set, plan_golden_import, read_for_import
    from labeler_storage import open_store
    from labeler_storage.engine import shown_url

    loaded = None
    if corpus is not None:
        from labeler.corpus import load_corpus

        loaded = load_corpus(corpus)
    try:  # the whole file is checked before the database is opened
        golden_set = read_for_import(golden, corpus=loaded, keep_scale=keep_scale)
    except GoldenFormatError as exc:
        raise UserError(exc.summary(MAX_SHOWN)) from exc
    store = open_store(db_url)
    try:
        if dry_run:
            plan = plan_golden_import(store, golden_set, collection=collection)
            click.echo(f"{golden}: {plan.line} Nothing was written (--dry-run).")
            if line := file_grades_line(plan, count_file_grades):
                click.echo(f"  {line} (--count-file-grades / --keep-file-grades-apart)")
            for c in plan.conflicts:
                click.echo(f"  {c.query_id}: {', '.join(c.reasons)}: {c.stored_text!r} here, {c.file_text!r} in the file")
            return
        done = import_golden_set(store, golden_set, corpus=loaded, collection=collection, on_conflict=on_conflict,
                                 corpus_path=str(corpus.resolve()) if corpus else None, by=_who(),
                                 file_name=golden.name, count_file_grades=count_file_grades)
    except ImportConflictError as exc:
        raise UserError(f"{golden}: {exc.message} Hint: see them with --dry-run, then pass --on-conflict new "
                        "(fresh ids), skip, or replace (the replaced text and grades go to the history).") from exc
    finally:
        store.close()
    if loaded is not None and done.corpus_changed(loaded.fingerprint):
        click.echo(f"Note: collection {collection!r} was labelled against another corpus version "
                   f"({done.previous_fingerprint[:19]}); it now records {loaded.fingerprint[:19]}.", err=True)
    click.echo(f"{done.summary.line} Database: {shown_url(store.url)}.")  # a PostgreSQL password is never printed


def _who() -> str:
    """Who imports from the shell (kept with the grades a replacing import replaces)."""
    return os.environ.get("USER") or os.environ.get("USERNAME") or "labeler import"


def _require_folder(out: Path) -> None:
    """The folder OUT goes into must exist, as --db's folder must: a typo is refused, not created."""
    folder = out.expanduser().absolute().parent
    if folder.exists() or not next(p for p in folder.parents if p.exists()).is_dir():
        return  # there, or under a regular file (which the writer names)
    raise InputError("the output folder does not exist", path=str(folder),
                     hint=f"create it first (mkdir -p {folder}), or pass another output path.")


def _refuse_replacing(out: Path, fmt: str) -> None:
    """An InputError when the export would replace a file: another set's queries and qrels in a BEIR folder
    (its corpus left beside the new ones), or a golden file someone wrote, were replaced without a word."""
    out = out.expanduser()  # as the writers read it: "~/golden.jsonl" passed quoted is the home folder's
    for target in (out / "queries.jsonl", out / "qrels" / "test.tsv") if fmt == "beir" else (out,):
        if target.is_file():
            raise InputError("the file exists, and an export replaces no file unless told to", path=str(target),
                             hint="pass --force to replace it, or give another OUT.")


@cli.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "trec", "beir"]), default="jsonl", show_default=True,
              help="jsonl: golden JSONL v1 file; trec: TREC qrels file; beir: folder with queries.jsonl + qrels/test.tsv.")
@click.option("--collection", default="default", show_default=True, callback=_collection_name,
              help="Collection to export.")
@click.option("--db", "db_url", default=None, help=DB_HELP)
@click.option("--complete-only", is_flag=True, help="Only questions with a relevant document or marked unanswerable.")
@click.option("--mark-stale", is_flag=True,
              help="List each question's stale documents (edited or deleted since judged) as `stale_docs` (jsonl).")
@click.option("--with-machine", is_flag=True,
              help="Write each question's machine grades, with judge, model, prompt hash and content hash, under "
                   "their own field `machine_grades` (jsonl); they never enter `relevance`.")
@click.option("--force", is_flag=True, help="Replace OUT (or a BEIR folder's queries.jsonl and qrels) if it exists.")
@handle_errors
def export_command(out: Path, fmt: str, collection: str, db_url: str | None, complete_only: bool,
                   mark_stale: bool, with_machine: bool, force: bool) -> None:
    """Export a collection's golden set to OUT (JSONL: each annotator's grades beside the consensus)."""
    from labeler_app.transfer import export_to, golden_to_export
    from labeler_storage import normalize_db_url, open_store

    if with_machine and fmt != "jsonl":
        raise InputError(f"--with-machine writes machine grades into golden JSONL; {fmt} cannot hold them",
                         hint="export --format jsonl --with-machine, or leave --with-machine out.")
    _require_folder(out)
    if not force:
        _refuse_replacing(out, fmt)
    url = normalize_db_url(db_url)
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        raise InputError("no labeler database here yet", path=url[len("sqlite:///"):],
                         hint="import a golden set or label in the app first, or pass --db.")
    store = open_store(url)
    try:
        golden = golden_to_export(store, collection=collection, complete_only=complete_only, mark_stale=mark_stale,
                                  with_machine=with_machine)
    finally:
        store.close()
    export_to(golden, fmt, out)
    pairs = sum(len(q.relevance) for q in golden.queries)
    click.echo(f"Exported {len(golden.queries)} questions ({pairs} judged pairs) from collection "
               f"{collection!r} to {out} ({fmt}).")
    if n_stale := sum(len(q.extra.get("stale_docs", ())) for q in golden.queries):
        click.echo(f"Note: {n_stale} judged documents are stale (marked as stale_docs).", err=True)
    unjudged = sum(1 for q in golden.queries if not q.relevance)
    if fmt == "trec" and unjudged:
        click.echo(f"Note: {unjudged} question(s) without judged documents are not in the qrels "
                   "(TREC qrels cannot hold them).", err=True)
