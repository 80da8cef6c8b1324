"""corpus versions, content hashes of documents and of judged documents, runs' corpus"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    """Labels that stay true when the corpus changes. Existing judgments get no hash here (the
    database holds no documents): the app hashes them against the corpus it next opens, and
    that version's note says so (labeler_storage.versions.record_version)."""
    for column in ("ALTER TABLE judgments ADD COLUMN doc_hash TEXT",
                   "ALTER TABLE judgment_history ADD COLUMN doc_hash TEXT",
                   "ALTER TABLE runs ADD COLUMN corpus_path TEXT",
                   "ALTER TABLE runs ADD COLUMN corpus_version INTEGER"):
        op.execute(column)
    v8 = sa.MetaData()
    sa.Table("collections", v8, sa.Column("id", sa.Integer, primary_key=True))
    sa.Table("corpus_versions", v8,
             sa.Column("id", sa.Integer, primary_key=True),
             sa.Column("collection_id", sa.Integer, sa.ForeignKey("collections.id", ondelete="CASCADE"),
                       nullable=False),
             sa.Column("version", sa.Integer, nullable=False),
             sa.Column("corpus_path", sa.Text),
             sa.Column("fingerprint", sa.Text, nullable=False),
             sa.Column("n_docs", sa.Integer, nullable=False),
             sa.Column("diff", sa.Text, nullable=False),
             sa.Column("note", sa.Text, nullable=False, server_default=""),
             sa.Column("created_at", sa.Text, nullable=False),
             sa.Column("created_by", sa.Text, nullable=False, server_default=""),
             sa.UniqueConstraint("collection_id", "version", name="uq_corpus_versions_collection_version"))
    sa.Table("corpus_docs", v8,
             sa.Column("collection_id", sa.Integer, sa.ForeignKey("collections.id", ondelete="CASCADE"),
                       primary_key=True),
             sa.Column("doc_id", sa.Text, primary_key=True),
             sa.Column("doc_hash", sa.Text, nullable=False))
    sa.Table("doc_texts", v8,
             sa.Column("doc_hash", sa.Text, primary_key=True),
             sa.Column("title", sa.Text, nullable=False),
             sa.Column("text", sa.Text, nullable=False),
             sa.Column("metadata", sa.Text, nullable=False, server_default="{}"))
    v8.create_all(op.get_bind(), tables=[v8.tables[t] for t in ("corpus_versions", "corpus_docs", "doc_texts")])
