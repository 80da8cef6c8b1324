"""users, sessions, sign-in throttling, team settings, judgment history, who wrote what"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from labeler_storage.schema import login_failures, team_settings

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    """Team mode: users, sessions, sign-in throttling and settings; who wrote what; the grades a
    regrade replaced. The new tables are copied from SCHEMA (judgment_history frozen since v8, users since v13,
    sessions since v14): the
    next change to any of them must first freeze this revision's copy (as 0001 does)."""
    for column in ("ALTER TABLE collections ADD COLUMN corpus_set_by TEXT NOT NULL DEFAULT ''",
                   "ALTER TABLE collections ADD COLUMN corpus_set_at TEXT",
                   "ALTER TABLE questions ADD COLUMN updated_by TEXT NOT NULL DEFAULT ''",
                   "ALTER TABLE runs ADD COLUMN created_by TEXT NOT NULL DEFAULT ''"):
        op.execute(column)
    v6 = sa.MetaData()
    sa.Table("questions", v6, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table(  # frozen: v8 added doc_hash to SCHEMA's copy, v9 widened its grade on PostgreSQL
        "judgment_history", v6,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("doc_id", sa.Text, nullable=False),
        sa.Column("annotator", sa.Text, nullable=False),
        sa.Column("grade", sa.Integer, nullable=False),
        sa.Column("note", sa.Text, nullable=False, server_default=""),
        sa.Column("given_at", sa.Text, nullable=False),
        sa.Column("replaced_at", sa.Text, nullable=False),
        sa.Column("replaced_by", sa.Text, nullable=False),
        sa.Column("change", sa.Text, nullable=False),
        sa.Index("ix_judgment_history_question", "question_id", "doc_id"))
    sa.Table(  # frozen: v13 added oidc_subject to SCHEMA's copy
        "users", v6,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("email", sa.Text, nullable=False, unique=True),
        sa.Column("name", sa.Text, nullable=False, server_default=""),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("password_hash", sa.Text),
        sa.Column("invite_hash", sa.Text),
        sa.Column("invite_expires_at", sa.Text),
        sa.Column("disabled", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("created_by", sa.Text, nullable=False, server_default=""),
        sa.Column("updated_at", sa.Text, nullable=False),
        sa.Column("updated_by", sa.Text, nullable=False, server_default=""))
    sa.Table(  # frozen: v14 added client_hash, code_hash, code_expires_at and cookie_hash to SCHEMA's copy
        "sessions", v6,
        sa.Column("token_hash", sa.Text, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.Text, nullable=False),
        sa.Column("expires_at", sa.Text, nullable=False))
    for table in (login_failures, team_settings):
        table.to_metadata(v6)
    v6.create_all(op.get_bind(), tables=[v6.tables[t] for t in ("judgment_history", "users", "sessions",
                                                                 "login_failures", "team_settings")])
