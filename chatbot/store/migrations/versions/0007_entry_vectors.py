"""Entry vectors of the optional semantic search, by model and content hash (revision 0007 after
0006, 2026-12-01)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "entry_vectors",
        sa.Column("model", sa.String(200), primary_key=True),
        sa.Column("content_hash", sa.String(64), primary_key=True),
        sa.Column("dims", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("entry_vectors")
