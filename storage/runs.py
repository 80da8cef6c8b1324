"""Saved evaluation runs inside the caller's transaction: save, list, load, delete.

Saving or deleting a run bumps its collection's revision (the app caches run lists on it).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from labeler.config import config_hash_of
from labeler.errors import InputError
from labeler_storage import schema as S
from labeler_storage.clock import now_iso
from labeler_storage.collection import bump_revision, collection_id
from labeler_storage.records import RunRecord, RunSummary


def json_ready(value: Any) -> Any:
    """Plain JSON types from numpy scalars, dataclasses, tuples and sets (for run records)."""
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return json_ready(value.to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return json_ready(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(json_ready(v) for v in value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return value.item()
    return value


def save_run(conn: Connection, config: Any, *, summary: Mapping[str, Any], per_query: Mapping[str, Any],
             golden_hash: str, corpus_fingerprint: str | None, config_hash: str | None, name: str,
             collection: str, by: str = "", corpus_path: str | None = None) -> int:
    """Insert a run; its id. `config` is a RunConfig (or any JSON-able mapping). The run records
    the corpus it searched: path, fingerprint, and the collection's version with that fingerprint."""
    config_dict = json_ready(config)
    if not isinstance(config_dict, dict):
        raise InputError("a run config must be a mapping or a RunConfig", hint="pass RunConfig(...) or its to_dict().")
    if config_hash is None:
        config_hash = getattr(config, "config_hash", None) or config_hash_of(config_dict)
    cid = collection_id(conn, collection, create=True)
    v = S.corpus_versions
    version = conn.execute(sa.select(sa.func.max(v.c.version)).where(
        v.c.collection_id == cid, v.c.fingerprint == corpus_fingerprint)).scalar() if corpus_fingerprint else None
    run_id = conn.execute(S.runs.insert().values(
        collection_id=cid, name=name or "", config=config_dict, config_hash=config_hash,
        golden_hash=golden_hash, corpus_fingerprint=corpus_fingerprint, summary=json_ready(summary),
        per_query=json_ready(per_query), created_at=now_iso(conn), created_by=by or "", corpus_path=corpus_path,
        corpus_version=version)).inserted_primary_key[0]
    bump_revision(conn, cid)
    return run_id


def _run_select(*columns: Any) -> sa.Select:
    r, c = S.runs, S.collections
    return sa.select(r.c.id, c.c.name.label("collection"), r.c.name, r.c.created_at, r.c.config_hash,
                     r.c.golden_hash, r.c.corpus_fingerprint, r.c.summary, r.c.created_by, r.c.corpus_path,
                     r.c.corpus_version, *columns).join(c, c.c.id == r.c.collection_id)


def list_runs(conn: Connection, *, collection: str, limit: int | None) -> list[RunSummary]:
    """Saved runs of a collection, newest first (no per-question detail)."""
    cid = collection_id(conn, collection)
    stmt = _run_select().where(S.runs.c.collection_id == cid).order_by(S.runs.c.id.desc())
    if limit is not None:
        stmt = stmt.limit(limit)
    return [RunSummary(r.id, r.collection, r.name, r.created_at, r.config_hash, r.golden_hash,
                       r.corpus_fingerprint, r.summary, r.created_by, r.corpus_path, r.corpus_version)
            for r in conn.execute(stmt)]


def load_run(conn: Connection, run_id: int) -> RunRecord:
    """A saved run with its config and per-question results."""
    r = conn.execute(_run_select(S.runs.c.config, S.runs.c.per_query).where(S.runs.c.id == run_id)).first()
    if r is None:
        raise InputError(f"no saved run with id {run_id}", hint="list the runs to see their ids.")
    return RunRecord(r.id, r.collection, r.name, r.created_at, r.config_hash, r.golden_hash,
                     r.corpus_fingerprint, r.summary, r.created_by, r.corpus_path, r.corpus_version,
                     config=r.config, per_query=r.per_query)


def delete_run(conn: Connection, run_id: int) -> bool:
    """Delete a saved run; False if there was none."""
    cid = conn.execute(sa.select(S.runs.c.collection_id).where(S.runs.c.id == run_id)).scalar()
    if cid is None:
        return False
    conn.execute(S.runs.delete().where(S.runs.c.id == run_id))
    bump_revision(conn, cid)
    return True
