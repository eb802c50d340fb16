"""Subscriptions from Slack, the entries seen in the digest folder, announcements.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


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
    op.create_table(
        "digest_entries",
        sa.Column("entry_id", sa.String(64), primary_key=True),
        sa.Column("batch", sa.String(64), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_digest_entries_batch", "digest_entries", ["batch"])
    op.create_table(
        "announcements",
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("batch", sa.String(64), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_ts", sa.String(32), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("announcements")
    op.drop_index("ix_digest_entries_batch", table_name="digest_entries")
    op.drop_table("digest_entries")
    op.drop_table("subscriptions")
