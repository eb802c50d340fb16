"""Usage: searches, answers, entry views/shares, feedback, weekly curator reports.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "usage_searches",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("query", sa.String(200), nullable=False),
        sa.Column("results", sa.Integer, nullable=False),
    )
    op.create_index("ix_usage_searches_at", "usage_searches", ["at"])
    op.create_table(
        "usage_entry_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
    )
    op.create_index("ix_usage_entry_events_at", "usage_entry_events", ["at"])
    op.create_table(
        "usage_answers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("intent", sa.String(32), nullable=False),
        sa.Column("found", sa.Boolean, nullable=False),
        sa.Column("question", sa.String(300), nullable=True),
    )
    op.create_index("ix_usage_answers_at", "usage_answers", ["at"])
    op.create_table(
        "usage_feedback",
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("target", sa.String(240), primary_key=True),
        sa.Column("entry_id", sa.String(64), primary_key=True),
        sa.Column("voter", sa.String(64), primary_key=True),
        sa.Column("vote", sa.SmallInteger, nullable=False),
        sa.Column("intent", sa.String(32), nullable=True),
        sa.Column("missing", sa.Text, nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_usage_feedback_at", "usage_feedback", ["at"])
    op.create_table(
        "curator_reports",
        sa.Column("week", sa.String(10), primary_key=True),
        sa.Column("channel", sa.String(64), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_ts", sa.String(32), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("curator_reports")
    op.drop_index("ix_usage_feedback_at", table_name="usage_feedback")
    op.drop_table("usage_feedback")
    op.drop_index("ix_usage_answers_at", table_name="usage_answers")
    op.drop_table("usage_answers")
    op.drop_index("ix_usage_entry_events_at", table_name="usage_entry_events")
    op.drop_table("usage_entry_events")
    op.drop_index("ix_usage_searches_at", table_name="usage_searches")
    op.drop_table("usage_searches")
