"""suggestions_seen: the machine grades annotators were shown as suggestions, and their grade at the time"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    """One new table (a frozen copy here; labeler_storage.schema holds the current one): `suggestions_seen`,
    one row per (question, document, annotator, judge) the first time the Label page showed that judge's
    grade to that annotator, with the grade shown and the annotator's own grade then (NULL: not graded
    yet, so what they give after it is a post-edit). No existing row changes."""
    v16 = sa.MetaData()
    sa.Table("questions", v16, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("suggestions_seen", v16,
             sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
             sa.Column("doc_id", sa.Text, primary_key=True),
             sa.Column("annotator", sa.Text, primary_key=True),
             sa.Column("judge", sa.Text, primary_key=True),
             sa.Column("machine_grade", sa.Integer, nullable=False),
             sa.Column("grade_before", sa.BigInteger().with_variant(sa.Integer(), "sqlite")),
             sa.Column("seen_at", sa.Text, nullable=False))
    v16.create_all(op.get_bind(), tables=[v16.tables["suggestions_seen"]])
