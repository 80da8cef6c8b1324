"""unanswerable_votes: each annotator's own unanswerable judgment"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    """The "unanswerable" flag becomes each annotator's own judgment. A question marked so keeps one vote: by
    whoever last changed it (who marked it, since v6), else the flag as one voice (as an import)."""
    v7 = sa.MetaData()
    sa.Table("questions", v7, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("unanswerable_votes", v7,
             sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
             sa.Column("annotator", sa.Text, primary_key=True),
             sa.Column("created_at", sa.Text, nullable=False))
    v7.create_all(op.get_bind(), tables=[v7.tables["unanswerable_votes"]])
    op.get_bind().execute(sa.text(
        "INSERT INTO unanswerable_votes (question_id, annotator, created_at) "
        "SELECT id, CASE WHEN updated_by <> '' THEN updated_by ELSE :imported END, "
        "updated_at FROM questions WHERE unanswerable"), {"imported": "(import)"})  # labeler_storage.records.IMPORT_ANNOTATOR
