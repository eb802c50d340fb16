"""Daily posts, bot threads, handled events.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "daily_posts",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_ts", sa.String(32), nullable=True),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "bot_threads",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("thread_ts", sa.String(32), primary_key=True),
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "handled_events",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_handled_events_handled_at", "handled_events", ["handled_at"])


def downgrade() -> None:
    op.drop_index("ix_handled_events_handled_at", table_name="handled_events")
    op.drop_table("handled_events")
    op.drop_table("bot_threads")
    op.drop_table("daily_posts")
