"""base tables: collections, questions, judgments, runs"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    """Create the version-1 tables from a frozen copy: later changes to SCHEMA must not leak in here."""
    v1 = sa.MetaData()
    sa.Table(
        "collections", v1,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("corpus_path", sa.Text),
        sa.Column("corpus_fingerprint", sa.Text),
        sa.Column("created_at", sa.Text, nullable=False),
    )
    sa.Table(
        "questions", v1,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("collection_id", sa.Integer, sa.ForeignKey("collections.id", ondelete="CASCADE"), nullable=False),
        sa.Column("query_id", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("query_type", sa.Text, nullable=False, server_default=""),
        sa.Column("unanswerable", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("notes", sa.Text, nullable=False, server_default=""),
        sa.Column("author", sa.Text, nullable=False, server_default=""),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.Column("extra", sa.Text, nullable=False, server_default="{}"),
        sa.UniqueConstraint("collection_id", "query_id", name="uq_questions_collection_query"),
    )
    sa.Table(
        "judgments", v1,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("doc_id", sa.Text, nullable=False),
        sa.Column("grade", sa.Integer, nullable=False),
        sa.Column("annotator", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.UniqueConstraint("question_id", "doc_id", "annotator", name="uq_judgments_question_doc_annotator"),
    )
    sa.Table(
        "runs", v1,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("collection_id", sa.Integer, sa.ForeignKey("collections.id", ondelete="CASCADE"), nullable=False),
        sa.Column("config", sa.Text, nullable=False),
        sa.Column("config_hash", sa.Text, nullable=False),
        sa.Column("golden_hash", sa.Text, nullable=False),
        sa.Column("corpus_fingerprint", sa.Text),
        sa.Column("summary", sa.Text, nullable=False),
        sa.Column("per_query", sa.Text, nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Index("ix_runs_collection_created", "collection_id", "created_at"),
    )
    v1.create_all(op.get_bind())
