"""`labeler sources`: the grades each consensus-only file brought, listed apart, and whether each
counts in the consensus (labeler_app.grade_sources, the use case the Golden set page shares)."""
from __future__ import annotations

import click

from labeler_edge.cli import cli, handle_errors
from labeler_edge.cli.golden import DB_HELP, _collection_name, _who

COLLECTION = click.option("--collection", default="default", show_default=True, callback=_collection_name,
                          help="Collection whose sources to list or switch.")
DB = click.option("--db", "db_url", default=None, help=DB_HELP)


@cli.group("sources")
def sources() -> None:
    """Grade sources: each imported consensus-only file's grades, counted in the consensus or kept apart."""


@sources.command("list")
@COLLECTION
@DB
@handle_errors
def list_command(collection: str, db_url: str | None) -> None:
    """List the collection's sources: file, import time, grades, questions, counted or kept apart."""
    from labeler_app import grade_sources as src
    from labeler_storage import CollectionStore, open_store

    with open_store(db_url) as store:
        rows = src.source_rows(CollectionStore(store, collection))
    if not rows:
        click.echo(f"Collection {collection!r} has no grade sources (no consensus-only file was imported).")
    for r in rows:
        switched = f"; last switched {r['last switched']}" if r["last switched"] else ""
        click.echo(f"{r['source']}: {r['grades']} grades on {r['questions']} questions, {r['counted']}; "
                   f"file {r['file']}, imported {r['imported']} by {r['imported by'] or '?'}{switched}")


def _switch(name: str, counted: bool, collection: str, db_url: str | None) -> None:
    from labeler_app import grade_sources as src
    from labeler_app.access import local_actor
    from labeler_storage import CollectionStore, open_store

    with open_store(db_url) as store:
        click.echo(src.set_source_counted(CollectionStore(store, collection), local_actor(_who()), name, counted))


def _switch_command(word: str, counted: bool, doc: str) -> None:
    """Add `labeler sources WORD NAME`: count source NAME's grades in the consensus, or keep them apart."""
    def command(name: str, collection: str, db_url: str | None) -> None:
        _switch(name, counted, collection, db_url)

    command.__doc__ = doc
    sources.command(word)(click.argument("name")(COLLECTION(DB(handle_errors(command)))))


_switch_command("count", True, "Count source NAME's grades in the consensus, where no person graded the document.")
_switch_command("apart", False, "Keep source NAME's grades apart: counted nowhere (consensus, status, export "
                                "relevance, metrics).")
