"""Schema migrations through Alembic: bring any labeler database (down to an empty one) up to `SCHEMA`.

The revisions are storage/alembic/versions/, one per schema version: revision "0007" is version 7.
They run inside the caller's one write transaction (all or nothing, on SQLite and PostgreSQL) and
each is also recorded in `schema_version` (number, name, time): the labeler's own marker, which
the code from before Alembic checks, so it refuses a database that this code took further.
`alembic_version` is Alembic's pointer. A database from before Alembic (`schema_version` only,
versions 1-8) is recognised: stamped at its version and upgraded from there, never recreated.

Guards, checked before anything is written: a database that holds tables but no `schema_version`
is someone else's; one whose version (by either marker) is past this code's is from a newer labeler.
A revision never reads `SCHEMA` for a table a later revision changes: it keeps a frozen copy of the
table as it was (0001 and 0006 show how). Tests build the schema through the revisions and compare
it with `SCHEMA`; others open databases made by earlier versions and see their data intact.
To add version N: copy the last revision file to `000N_<what>.py` (revision "000N", down_revision
the one before; its docstring is the name) and raise LATEST_VERSION.
"""
from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.errors import StorageError
from storage.schema import schema_version, utc_now

ALEMBIC_DIR = Path(__file__).with_name("alembic")
LATEST_VERSION = 15
PG_MIGRATION_LOCK = 0x6C6162656C6572  # "labeler": processes migrating one PostgreSQL database queue on it
_REVISION = re.compile(r"\d{4}")
_ALEMBIC = threading.Lock()  # Alembic's `context` is one global per process: one migration at a time


@dataclass(frozen=True)
class DatabaseState:
    """Where a database stands: its schema version (0: empty) and its Alembic revision (None: not stamped)."""

    version: int
    revision: str | None
    labeler: bool  # it has our `schema_version` table


def revision_of(version: int) -> str:
    """The Alembic revision id of a schema version ("0007" for 7)."""
    return f"{version:04d}"


def alembic_config(conn: Connection, **options: Any) -> Any:
    """An Alembic Config for storage/alembic on this connection (`options` go to context.configure)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    config.attributes.update(connection=conn, options=options)
    return config


@functools.cache
def script_directory() -> Any:
    """The revisions, as Alembic reads them (read once per process)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(ALEMBIC_DIR))


def database_state(conn: Connection) -> DatabaseState:
    """The database's version and revision; a StorageError for a database that is not a labeler's."""
    names = set(sa.inspect(conn).get_table_names())
    if "schema_version" not in names:
        if names:  # someone else's database: never add our tables to it
            raise StorageError(
                f"the database holds tables ({', '.join(sorted(names)[:5])}) but is not a labeler database",
                hint="point --db / LABELER_HOME / LABELER_DB_URL at a labeler database or at a new one.")
        return DatabaseState(0, None, False)
    version = conn.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0
    revision = None
    if "alembic_version" in names:
        revision = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    if revision is not None:
        if not _REVISION.fullmatch(revision):
            raise StorageError(f"the database is at Alembic revision {revision!r}, which is not one of the labeler's",
                               hint="point --db / LABELER_DB_URL at a labeler database or at a new one.")
        version = max(version, int(revision))
    return DatabaseState(version, revision, True)


def current_version(conn: Connection) -> int:
    """The schema version of the database (0 for an empty one)."""
    return database_state(conn).version


def check_known(version: int) -> None:
    """Refuse a database made by a newer labeler."""
    if version > LATEST_VERSION:
        raise StorageError(
            f"the database is at schema version {version}, newer than this labeler knows ({LATEST_VERSION})",
            hint="upgrade golden-set-labeler, or point --db at another database.")


def up_to_date(state: DatabaseState) -> bool:
    """True when the database needs no migration (a StorageError when it is newer than this code)."""
    check_known(state.version)
    return state.revision == revision_of(LATEST_VERSION)


def upgrade(conn: Connection, target: int = LATEST_VERSION) -> list[int]:
    """Bring the database to schema version `target` inside the caller's write transaction; the versions applied."""
    from alembic import command

    if conn.dialect.name == "postgresql":  # re-checked below under the lock: another process may have won
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(PG_MIGRATION_LOCK)))
    state = database_state(conn)
    check_known(state.version)
    if not state.labeler:
        schema_version.create(conn)
    applied: list[int] = []

    def record(ctx: Any, step: Any, heads: Any, run_args: Any) -> None:
        if step.is_upgrade and not step.is_stamp:
            version = int(step.up_revision_id)
            conn.execute(schema_version.insert().values(version=version, name=step.up_revision.doc,
                                                        applied_at=utc_now()))
            applied.append(version)

    with _ALEMBIC:
        if state.revision is None and state.version > 0:  # made before Alembic: recognised, not recreated
            command.stamp(alembic_config(conn), revision_of(state.version))
        if state.version < target:
            command.upgrade(alembic_config(conn, on_version_apply=[record]), revision_of(target))
    return applied
