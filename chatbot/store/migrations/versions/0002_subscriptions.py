"""Subscriptions from Slack, the entries seen in the digest folder, announcements (revision 0002
after 0001, 2026-11-30)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chatbot.store.migrations.steps import (
    create_claim_table,
    create_indexed_table,
    drop_indexed_table,
    required_columns,
)

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "subscriptions",
        sa.Column("channel", sa.String(64), primary_key=True),
        *required_columns(topics=sa.Text, hour=sa.Integer, minute=sa.Integer, days=sa.String(32)),
        *required_columns(timezone=sa.String(64), strict=sa.Boolean, announce=sa.Boolean),
        *required_columns(updated_by=sa.String(64), updated_at=sa.DateTime(timezone=True)),
    )
    create_indexed_table(
        "digest_entries",
        "batch",
        sa.Column("entry_id", sa.String(64), primary_key=True),
        *required_columns(batch=sa.String(64), seen_at=sa.DateTime(timezone=True)),
    )
    create_claim_table("announcements", ("channel", 64), ("batch", 64))


def downgrade() -> None:
    op.drop_table("announcements")
    drop_indexed_table("digest_entries", "batch")
    op.drop_table("subscriptions")
