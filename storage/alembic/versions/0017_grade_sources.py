"""grade_sources: each consensus-only file's grades kept as that file's, counted only where the user says so"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    """A new table (a frozen copy here; labeler_storage.schema holds the current one), and one row per
    collection whose judgments or votes hold the old pseudo-annotator "(import)": every consensus-only
    file imported before became that one source, counted, as it was. No existing row changes."""
    v17 = sa.MetaData()
    sa.Table("collections", v17, sa.Column("id", sa.Integer, primary_key=True))
    table = sa.Table("grade_sources", v17,
                     sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("collection_id", sa.Integer, sa.ForeignKey("collections.id", ondelete="CASCADE"),
                               nullable=False),
                     sa.Column("name", sa.Text, nullable=False),
                     sa.Column("file_name", sa.Text, nullable=False, server_default=""),
                     sa.Column("imported_at", sa.Text, nullable=False, server_default=""),
                     sa.Column("imported_by", sa.Text, nullable=False, server_default=""),
                     sa.Column("counted", sa.Boolean, nullable=False, server_default=sa.true()),
                     sa.Column("changes", sa.Text, nullable=False, server_default="[]"),
                     sa.UniqueConstraint("collection_id", "name", name="uq_grade_sources_collection_name"))
    conn = op.get_bind()
    v17.create_all(conn, tables=[table])
    conn.execute(sa.text(
        "INSERT INTO grade_sources (collection_id, name, counted) SELECT DISTINCT q.collection_id, :name, :yes "
        "FROM questions q WHERE EXISTS (SELECT 1 FROM judgments j WHERE j.question_id = q.id AND j.annotator = :name) "
        "OR EXISTS (SELECT 1 FROM unanswerable_votes v WHERE v.question_id = q.id AND v.annotator = :name)"),
        {"name": "(import)", "yes": True})  # labeler_storage.records.IMPORT_ANNOTATOR
