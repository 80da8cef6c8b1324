"""Alembic's environment for the labeler database, run by labeler_storage.migrations (no alembic.ini).

labeler_storage.migrations passes the open connection (inside its write transaction, after its checks:
not someone else's database, not newer than this code, a pre-Alembic database stamped) and the
context options in `config.attributes`. Opening a store is the way to migrate; for other Alembic
commands (history, autogenerate) build the Config with labeler_storage.migrations.alembic_config(conn).
"""
from __future__ import annotations

from alembic import context

from labeler.errors import StorageError
from labeler_storage.schema import SCHEMA


def run() -> None:
    """Run the migrations on the connection labeler_storage.migrations gives, in its transaction."""
    config = context.config
    connection = config.attributes.get("connection")
    if connection is None:
        raise StorageError("the labeler's migrations run on an open connection",
                           hint="open the database with storage.open_store (or any labeler command).")
    context.configure(connection=connection, target_metadata=SCHEMA, **config.attributes.get("options", {}))
    with context.begin_transaction():  # inside the caller's transaction: Alembic neither begins nor commits
        context.run_migrations()


run()
