"""The usage tables (migration 0003): what people searched, asked and rated, without who.

No column holds a Slack user id: a vote's voter is a salted hash (`chatbot.usage.privacy`),
needed only so one person's second vote replaces the first. Rows older than USAGE_RETENTION
are pruned.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Column, Integer, MetaData, SmallInteger, String, Table, Text

from chatbot.store.schema import UtcDateTime, claim_columns, keys, required

# Kept apart from chatbot.store.schema: the usage part owns its tables and its migration.
metadata = MetaData()

QUERY_LENGTH = 200
# Where a search, question or vote was made (`chatbot.usage.places`): public | private | im |
# unknown (migration 0005). The curator report quotes text only from "public".
PLACE_LENGTH = 16
QUESTION_LENGTH = 300


def _usage_table(name: str, *columns: Column[Any]) -> Table:
    """A table of usage rows: an id, the time `at` (indexed: rows are pruned by age), the columns."""
    return Table(
        name,
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("at", UtcDateTime(), nullable=False, index=True),
        *columns,
    )


def _place() -> Column[Any]:
    return Column("place", String(PLACE_LENGTH), nullable=True)


usage_searches = _usage_table(
    "usage_searches",
    *required(source=String(16), query=String(QUERY_LENGTH), results=Integer),  # query: normalised
    _place(),
)

usage_entry_events = _usage_table("usage_entry_events", *required(entry_id=String(64), kind=String(16)))

usage_answers = _usage_table(
    "usage_answers",
    *required(entry_id=String(64), intent=String(32), found=Boolean),
    # Only for answers the note did not have: the curator's list of gaps. Normalised, redacted.
    Column("question", String(QUESTION_LENGTH), nullable=True),
    _place(),
)

usage_feedback = Table(
    "usage_feedback",
    metadata,
    # kind: search | answer; target: the normalised query, or channel:ts; voter: a salted hash.
    *keys(kind=String(16), target=String(QUERY_LENGTH + 40), entry_id=String(64), voter=String(64)),
    Column("vote", SmallInteger, nullable=False),  # +1 | -1
    Column("intent", String(32), nullable=True),
    Column("missing", Text, nullable=True),  # the 👎 modal's optional answer, redacted
    _place(),  # where the vote was pressed
    Column("at", UtcDateTime(), nullable=False, index=True),
)

# One weekly report per (ISO week like 2026-W48, channel), claimed like the daily post.
curator_reports = Table(
    "curator_reports", metadata, *keys(week=String(10), channel=String(64)), *claim_columns()
)
