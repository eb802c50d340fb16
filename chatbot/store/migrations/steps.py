"""Table-building steps the migrations share.

Frozen like the migrations that use them: a revision relies on what a step creates on the day it
was written, so a step is never changed (a new schema gets a new step). Nothing here imports
today's schema (`chatbot.store.schema`, `chatbot.usage.tables`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op


def claim_columns() -> list[sa.Column[Any]]:
    """The columns of a claim after its key (daily posts, announcements, curator reports):
    'claimed' by an owner while it posts, 'posted' with Slack's message ts."""
    return [
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("message_ts", sa.String(32), nullable=True),
    ]


def required_columns(**types: Any) -> list[sa.Column[Any]]:
    """Non-null columns in the order named, `name=type`: a table of many settings as one list."""
    return [sa.Column(name, type_, nullable=False) for name, type_ in types.items()]


def create_claim_table(name: str, *keys: tuple[str, int]) -> None:
    """A table of claims: its key (string columns of the given lengths), then `claim_columns`."""
    op.create_table(
        name, *(sa.Column(key, sa.String(length), primary_key=True) for key, length in keys), *claim_columns()
    )


def create_usage_table(name: str, *columns: sa.Column[Any]) -> None:
    """A usage table (searches, entry events, answers): an id, the time `at` (indexed: rows are
    pruned by age), then the columns."""
    create_indexed_table(
        name,
        "at",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        *columns,
    )


def create_indexed_table(name: str, indexed: str, *columns: sa.Column[Any]) -> None:
    """A table and the index `ix_<table>_<column>` on one of its columns."""
    op.create_table(name, *columns)
    op.create_index(f"ix_{name}_{indexed}", name, [indexed])


def drop_indexed_table(name: str, indexed: str) -> None:
    """The index `create_indexed_table` made, then the table."""
    op.drop_index(f"ix_{name}_{indexed}", table_name=name)
    op.drop_table(name)
