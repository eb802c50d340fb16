"""Daily entries Slack refused for a channel because of the message itself (revision 0004 after
0003, 2026-12-01): the picker skips them there until their card changes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "daily_refused",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("entry_id", sa.String(64), primary_key=True),
        sa.Column("card", sa.String(64), primary_key=True),
        sa.Column("error", sa.String(64), nullable=False),
        sa.Column("refused_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("daily_refused")
