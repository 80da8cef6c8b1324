"""grades fit 64 bits on PostgreSQL too"""
from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    """An imported scale may hold any 64-bit grade (labeler_storage.checks.check_stored_grade). SQLite's
    INTEGER already holds 64 bits; PostgreSQL's is 32, so there the grade columns become BIGINT."""
    if op.get_bind().dialect.name != "postgresql":
        return
    for table in ("judgments", "judgment_history"):
        op.alter_column(table, "grade", type_=sa.BigInteger(), existing_type=sa.Integer(), existing_nullable=False)
