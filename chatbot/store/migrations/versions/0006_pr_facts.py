"""Live PR facts from GitHub and the claims that make one replica refresh them (revision 0006
after 0005, 2026-12-01)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from chatbot.store.migrations.steps import create_claim_table

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table(
        "pr_facts",
        sa.Column("repo", sa.String(200), primary_key=True),
        sa.Column("pr", sa.Integer, primary_key=True),
        # JSON: GitHub's answers as the sections the bot reads (pull, reviews, timeline).
        sa.Column("facts", sa.Text, nullable=False),
        # JSON: each section's ETag, sent back as If-None-Match.
        sa.Column("etags", sa.Text, nullable=False),
        sa.Column("fetched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
    )
    create_claim_table("github_refreshes", ("slot", 64))
    # Until when GitHub asked (rate limit, Retry-After) that nothing be sent, per API URL.
    op.create_table(
        "github_waits",
        sa.Column("api_url", sa.String(200), primary_key=True),
        sa.Column("until", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("github_waits")
    op.drop_table("github_refreshes")
    op.drop_table("pr_facts")
