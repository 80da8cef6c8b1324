"""judgments.note and runs.name"""
from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    """An annotator's reason for a grade ("only the 2025 policy"), and a run's display name."""
    op.execute("ALTER TABLE judgments ADD COLUMN note TEXT NOT NULL DEFAULT ''")
    op.execute("ALTER TABLE runs ADD COLUMN name TEXT NOT NULL DEFAULT ''")
