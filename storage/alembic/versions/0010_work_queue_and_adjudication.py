"""claims of the shared work queue, adjudicated grades"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    """Two new tables (frozen copies here; labeler_storage.schema holds the current ones): `claims`, who is
    judging which question until when (labeler_storage.work_queue), and `adjudications`, final grades."""
    v10 = sa.MetaData()
    sa.Table("questions", v10, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("claims", v10,
             sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
             sa.Column("annotator", sa.Text, primary_key=True),
             sa.Column("claimed_at", sa.Text, nullable=False),
             sa.Column("expires_at", sa.Text, nullable=False))
    sa.Table("adjudications", v10,
             sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
             sa.Column("doc_id", sa.Text, primary_key=True),
             sa.Column("grade", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
             sa.Column("note", sa.Text, nullable=False, server_default=""),
             sa.Column("by", sa.Text, nullable=False),
             sa.Column("at", sa.Text, nullable=False))
    v10.create_all(op.get_bind(), tables=[v10.tables["claims"], v10.tables["adjudications"]])
