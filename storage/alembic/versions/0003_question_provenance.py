"""questions.credited_annotators, questions.corpus_fingerprint, judgments by annotator"""
from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    """Imported golden files credit annotators who are not users of this database, and each
    question remembers the corpus it was written against; both round-trip through export."""
    op.execute("ALTER TABLE questions ADD COLUMN credited_annotators TEXT NOT NULL DEFAULT '[]'")
    op.execute("ALTER TABLE questions ADD COLUMN corpus_fingerprint TEXT")
    op.execute("CREATE INDEX ix_judgments_annotator ON judgments (annotator)")
