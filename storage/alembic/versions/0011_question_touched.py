"""questions.touched"""
from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"


def upgrade() -> None:
    """The collection revision of each question's last change (its text, votes, grades or adjudications),
    so a process holding the question index recomputes only the questions that changed."""
    op.execute("ALTER TABLE questions ADD COLUMN touched INTEGER NOT NULL DEFAULT 0")
