"""Subscriptions from Slack, the entries seen in the digest folder, announcements (revision 0002
after 0001, 2026-11-30)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chatbot.store.migrations.steps import create_claim_table, create_indexed_table, drop_indexed_table

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "subscriptions",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("topics", sa.Text, nullable=False),
        sa.Column("hour", sa.Integer, nullable=False),
        sa.Column("minute", sa.Integer, nullable=False),
        sa.Column("days", sa.String(32), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("strict", sa.Boolean, nullable=False),
        sa.Column("announce", sa.Boolean, nullable=False),
        sa.Column("updated_by", sa.String(64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    create_indexed_table(
        "digest_entries",
        "batch",
        sa.Column("entry_id", sa.String(64), primary_key=True),
        sa.Column("batch", sa.String(64), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    create_claim_table("announcements", ("channel", 64), ("batch", 64))


def downgrade() -> None:
    op.drop_table("announcements")
    drop_indexed_table("digest_entries", "batch")
    op.drop_table("subscriptions")
