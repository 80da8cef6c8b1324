"""declines of the shared work queue, question numbers never reused"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    """A new table (a frozen copy here; labeler_storage.schema holds the current one): `declines`, the questions
    an annotator gave back to the queue, which it then offers them only when nothing else wants them;
    and `deleted_numbers`."""
    v12 = sa.MetaData()
    sa.Table("questions", v12, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("declines", v12,
             sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), primary_key=True),
             sa.Column("annotator", sa.Text, primary_key=True),
             sa.Column("at", sa.Text, nullable=False))
    # Per collection, the highest q-NNNN number a deleted question held: a new question never takes a
    # deleted one's id (a link to it, or a tab still on it, would open an unrelated question).
    sa.Table("collections", v12, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("deleted_numbers", v12,
             sa.Column("collection_id", sa.Integer, sa.ForeignKey("collections.id", ondelete="CASCADE"),
                       primary_key=True),
             sa.Column("number", sa.Integer, nullable=False))
    v12.create_all(op.get_bind(), tables=[v12.tables["declines"], v12.tables["deleted_numbers"]])
