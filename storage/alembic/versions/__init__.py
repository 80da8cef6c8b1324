"""Alembic revisions, one per schema version; Alembic loads them by path (labeler_storage.migrations)."""
