"""machine_grades and judges: machine judges' grades kept apart from people's, judges saved by name"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    """Two new tables (frozen copies here; labeler_storage.schema holds the current ones): `machine_grades`, one
    row per (question, document, judge, prompt hash, content hash) with the model, parameters, raw answer
    and rationale; and `judges`, each saved judge's declaration. JSON columns are text (labeler_storage.schema.JSONText).
    No existing row changes."""
    v15 = sa.MetaData()
    sa.Table("questions", v15, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("machine_grades", v15,
             sa.Column("id", sa.Integer, primary_key=True),
             sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), nullable=False),
             sa.Column("doc_id", sa.Text, nullable=False),
             sa.Column("grade", sa.Integer, nullable=False),
             sa.Column("judge", sa.Text, nullable=False),
             sa.Column("model", sa.Text, nullable=False, server_default=""),
             sa.Column("prompt_hash", sa.Text, nullable=False, server_default=""),
             sa.Column("params", sa.Text, nullable=False, server_default="{}"),
             sa.Column("doc_hash", sa.Text, nullable=False, server_default=""),
             sa.Column("raw", sa.Text, nullable=False, server_default=""),
             sa.Column("rationale", sa.Text),
             sa.Column("at", sa.Text, nullable=False),
             sa.UniqueConstraint("question_id", "doc_id", "judge", "prompt_hash", "doc_hash",
                                 name="uq_machine_grades_pair"),
             sa.Index("ix_machine_grades_judge", "judge"))
    sa.Table("judges", v15,
             sa.Column("name", sa.Text, primary_key=True),
             sa.Column("spec", sa.Text, nullable=False),
             sa.Column("created_at", sa.Text, nullable=False),
             sa.Column("created_by", sa.Text, nullable=False, server_default=""),
             sa.Column("updated_at", sa.Text, nullable=False),
             sa.Column("updated_by", sa.Text, nullable=False, server_default=""))
    v15.create_all(op.get_bind(), tables=[v15.tables["machine_grades"], v15.tables["judges"]])
