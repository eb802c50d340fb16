"""Where each search, question and vote was made (revision 0005 after 0004, 2026-12-01): the
curator report quotes text only from public channels and counts the rest. Rows from before
have no place and count as private."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"

TABLES = ("usage_searches", "usage_answers", "usage_feedback")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("place", sa.String(16), nullable=True))


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("place")
