"""`labeler queue COLLECTION [--order seats|doubts] [--json]`: the questions that still want a judge, in
the order the work queue offers them (labeler_app.queue_order), with their seats and the machine judges'
doubt; the same order "Next for me" follows on the Label page."""
from __future__ import annotations

import json

import click

from labeler.errors import InputError
from labeler_edge.cli import cli, handle_errors
from labeler_edge.cli.golden import DB_HELP, _collection_name


@cli.command("queue")
@click.argument("collection", callback=_collection_name)
@click.option("--order", type=click.Choice(["seats", "doubts"]), default=None,
              help="seats: closest to its overlap first; doubts: where the machine judges are least sure or "
                   "disagree with a person first (default: the team's setting queue_order).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object: the order and the questions.")
@click.option("--db", "db_url", default=None, help=DB_HELP)
@handle_errors
def queue_command(collection: str, order: str | None, as_json: bool, db_url: str | None) -> None:
    """The work queue of COLLECTION: questions with a free seat, in the order it offers them."""
    from labeler_app.access import local_actor
    from labeler_app.queue_order import queue, queue_order
    from labeler_storage import CollectionStore, open_store

    with open_store(db_url) as opened:
        if opened.collections.get(collection) is None:
            raise InputError(f"no collection named {collection!r}", hint="see the collections with the app, or "
                                                                         "`labeler import` a golden set first.")
        store = CollectionStore(opened, collection)
        order = order or queue_order(store)
        rows = queue(store, local_actor("cli"), order)
    if as_json:
        click.echo(json.dumps({"order": order, "questions": [r.to_dict() for r in rows]}, ensure_ascii=False))
        return
    click.echo(f"{len(rows)} questions want a judge in {collection!r} (order: {order})")
    for r in rows:
        click.echo(f"  {r.query_id}  seats {r.seats}/{r.overlap}  doubt {r.doubt:.2f}")
