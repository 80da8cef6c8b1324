"""Alembic revisions, one per schema version; Alembic loads them by path (storage.migrations)."""
