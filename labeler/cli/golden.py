"""`labeler import` and `labeler export`: golden sets between files and the database.

The file is read and validated completely before the database is opened, so a bad file
leaves the database untouched; the import itself is one transaction.
"""
from __future__ import annotations

from pathlib import Path

import click

from labeler.cli import UserError, cli, handle_errors
from labeler.errors import GoldenFormatError, InputError

MAX_SHOWN = 20  # bad lines printed; the rest are counted
DB_HELP = "Database URL or SQLite file (default: $LABELER_HOME/labeler.db, i.e. .labeler/ in the cwd)."


@cli.command("import")
@click.argument("golden", type=click.Path(path_type=Path))
@click.option("--corpus", type=click.Path(path_type=Path), default=None,
              help="Corpus the doc ids must come from (JSONL, CSV, folder, BEIR folder); unknown ids are errors.")
@click.option("--collection", default="default", show_default=True, help="Collection to import into.")
@click.option("--db", "db_url", default=None, help=DB_HELP)
@click.option("--keep-scale", is_flag=True,
              help="Keep grades outside 0-3 (e.g. Cranfield's -1 and 1-4) instead of refusing the file.")
@handle_errors
def import_command(golden: Path, corpus: Path | None, collection: str, db_url: str | None, keep_scale: bool) -> None:
    """Import GOLDEN (a golden JSONL file or a BEIR folder) into the database, all or nothing."""
    from labeler.golden import read_golden
    from storage import open_store

    doc_ids = fingerprint = corpus_path = None
    if corpus is not None:
        from labeler.corpus import load_corpus

        loaded = load_corpus(corpus)
        doc_ids, fingerprint, corpus_path = loaded.doc_ids(), loaded.fingerprint, str(corpus.resolve())
    try:
        golden_set = read_golden(golden, keep_scale=keep_scale, doc_ids=doc_ids)
    except GoldenFormatError as exc:
        raise UserError(exc.summary(MAX_SHOWN)) from exc

    store = open_store(db_url)
    try:
        before = store.get_collection(collection)
        summary = store.import_golden(golden_set, collection=collection, corpus_path=corpus_path,
                                      corpus_fingerprint=fingerprint)
    finally:
        store.close()
    if before is not None and fingerprint and before.corpus_fingerprint not in (None, fingerprint):
        click.echo(f"Note: collection {collection!r} was labelled against another corpus version "
                   f"({before.corpus_fingerprint[:19]}); it now records {fingerprint[:19]}.", err=True)
    click.echo(f"Imported {summary.n_questions} questions ({summary.n_new} new, {summary.n_updated} updated, "
               f"{summary.n_unanswerable} unanswerable) with {summary.n_judgments} grades into collection "
               f"{collection!r} of {store.url}.")


@cli.command("export")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "trec", "beir"]), default="jsonl", show_default=True,
              help="jsonl: golden JSONL v1 file; trec: TREC qrels file; beir: folder with queries.jsonl + qrels/test.tsv.")
@click.option("--collection", default="default", show_default=True, help="Collection to export.")
@click.option("--db", "db_url", default=None, help=DB_HELP)
@click.option("--complete-only", is_flag=True, help="Only questions with a relevant document or marked unanswerable.")
@handle_errors
def export_command(out: Path, fmt: str, collection: str, db_url: str | None, complete_only: bool) -> None:
    """Export a collection's consensus golden set to OUT."""
    from labeler.golden import write_beir, write_golden, write_trec_qrels
    from storage import normalize_db_url, open_store

    url = normalize_db_url(db_url)
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        raise InputError("no labeler database here yet", path=url[len("sqlite:///"):],
                         hint="import a golden set or label in the app first, or pass --db.")
    store = open_store(url)
    try:
        golden = store.export_golden(collection=collection, complete_only=complete_only)
    finally:
        store.close()
    if not golden.queries:
        raise InputError(f"collection {collection!r} has no questions to export",
                         hint="add questions in the app or `labeler import` a golden file first.")
    if fmt == "jsonl":
        write_golden(golden, out)
    elif fmt == "trec":
        write_trec_qrels(golden, out)
    else:
        write_beir(golden, out)
    pairs = sum(len(q.relevance) for q in golden.queries)
    click.echo(f"Exported {len(golden.queries)} questions ({pairs} judged pairs) from collection "
               f"{collection!r} to {out} ({fmt}).")
    unjudged = sum(1 for q in golden.queries if not q.relevance)
    if fmt == "trec" and unjudged:
        click.echo(f"Note: {unjudged} question(s) without judged documents are not in the qrels "
                   "(TREC qrels cannot hold them).", err=True)
