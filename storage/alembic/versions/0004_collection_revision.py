"""collections.revision"""
from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    """A counter in the database, so every process (and st.cache_data) sees a write at once."""
    op.execute("ALTER TABLE collections ADD COLUMN revision INTEGER NOT NULL DEFAULT 0")
    op.execute("UPDATE collections SET revision = 1")  # 0 means "no such collection"
