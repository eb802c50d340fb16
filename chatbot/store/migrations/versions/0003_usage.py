"""Usage: searches, answers, entry views/shares, feedback, weekly curator reports (revision 0003
after 0002, 2026-11-30)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chatbot.store.migrations.steps import (
    create_claim_table,
    create_indexed_table,
    create_usage_table,
    drop_indexed_table,
)

revision = "0003"
down_revision = "0002"

# Every usage table is pruned by age: each has an index on its time `at`.
USAGE_TABLES = ("usage_feedback", "usage_answers", "usage_entry_events", "usage_searches")


def upgrade() -> None:
    create_usage_table(
        "usage_searches",
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("query", sa.String(200), nullable=False),
        sa.Column("results", sa.Integer, nullable=False),
    )
    create_usage_table(
        "usage_entry_events",
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
    )
    create_usage_table(
        "usage_answers",
        sa.Column("entry_id", sa.String(64), nullable=False),
        sa.Column("intent", sa.String(32), nullable=False),
        sa.Column("found", sa.Boolean, nullable=False),
        sa.Column("question", sa.String(300), nullable=True),
    )
    create_indexed_table(
        "usage_feedback",
        "at",
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("target", sa.String(240), primary_key=True),
        sa.Column("entry_id", sa.String(64), primary_key=True),
        sa.Column("voter", sa.String(64), primary_key=True),
        sa.Column("vote", sa.SmallInteger, nullable=False),
        sa.Column("intent", sa.String(32), nullable=True),
        sa.Column("missing", sa.Text, nullable=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
    )
    create_claim_table("curator_reports", ("week", 10), ("channel", 64))


def downgrade() -> None:
    op.drop_table("curator_reports")
    for table in USAGE_TABLES:
        drop_indexed_table(table, "at")
