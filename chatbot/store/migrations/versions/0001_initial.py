"""Daily posts, bot threads, handled events (revision 0001, the first, 2026-11-29)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chatbot.store.migrations.steps import claim_columns, create_indexed_table, drop_indexed_table

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "daily_posts",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("day", sa.Date, primary_key=True),
        sa.Column("entry_id", sa.String(64), nullable=False),
        *claim_columns(),
        sa.Column("posted_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "bot_threads",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("thread_ts", sa.String(32), primary_key=True),
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    create_indexed_table(
        "handled_events",
        "handled_at",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    drop_indexed_table("handled_events", "handled_at")
    op.drop_table("bot_threads")
    op.drop_table("daily_posts")
