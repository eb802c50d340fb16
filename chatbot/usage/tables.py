"""The usage tables (migration 0003): what people searched, asked and rated, without who.

No column holds a Slack user id: a vote's voter is a salted hash (`chatbot.usage.privacy`),
needed only so one person's second vote replaces the first. Searches and answers carry no
person at all. Rows older than USAGE_RETENTION are pruned.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
)

# Kept apart from chatbot.store.schema: the usage part owns its tables and its migration.
metadata = MetaData()


def _usage_table(name: str, *columns: Column[Any]) -> Table:
    """A table of usage rows: an id, the time `at` (indexed: rows are pruned by age), the columns."""
    return Table(
        name,
        metadata,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("at", DateTime(timezone=True), nullable=False, index=True),
        *columns,
    )


QUERY_LENGTH = 200
# Where a search, question or vote was made (`chatbot.usage.places`): public | private | im |
# unknown (migration 0005). The curator report quotes text only from "public".
PLACE_LENGTH = 16
QUESTION_LENGTH = 300

usage_searches = _usage_table(
    "usage_searches",
    Column("source", String(16), nullable=False),  # command | mention
    Column("query", String(QUERY_LENGTH), nullable=False),  # normalised
    Column("results", Integer, nullable=False),
    Column("place", String(PLACE_LENGTH), nullable=True),
)

usage_entry_events = _usage_table(
    "usage_entry_events",
    Column("entry_id", String(64), nullable=False),
    Column("kind", String(16), nullable=False),  # shown | shared
)

usage_answers = _usage_table(
    "usage_answers",
    Column("entry_id", String(64), nullable=False),
    Column("intent", String(32), nullable=False),
    Column("found", Boolean, nullable=False),
    # Only for answers the note did not have: the curator's list of gaps. Normalised, redacted.
    Column("question", String(QUESTION_LENGTH), nullable=True),
    Column("place", String(PLACE_LENGTH), nullable=True),
)

usage_feedback = Table(
    "usage_feedback",
    metadata,
    Column("kind", String(16), primary_key=True),  # search | answer
    Column("target", String(QUERY_LENGTH + 40), primary_key=True),  # normalised query, or channel:ts
    Column("entry_id", String(64), primary_key=True),
    Column("voter", String(64), primary_key=True),  # salted hash of the Slack user id
    Column("vote", SmallInteger, nullable=False),  # +1 | -1
    Column("intent", String(32), nullable=True),
    Column("missing", Text, nullable=True),  # the 👎 modal's optional answer, redacted
    Column("place", String(PLACE_LENGTH), nullable=True),  # where the vote was pressed
    Column("at", DateTime(timezone=True), nullable=False, index=True),
)

curator_reports = Table(
    "curator_reports",
    metadata,
    Column("week", String(10), primary_key=True),  # ISO week, 2026-W48
    Column("channel", String(64), primary_key=True),
    Column("state", String(16), nullable=False),  # claimed | posted
    Column("owner", String(200), nullable=False),
    Column("claimed_at", DateTime(timezone=True), nullable=False),
    Column("message_ts", String(32), nullable=True),
)
