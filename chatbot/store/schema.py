"""Tables of the store, as the migrations (chatbot/store/migrations) create them. Every guarantee
across processes rests on a primary key here: one daily post per (channel, day), one owner entry
per (channel, thread ts), one handling per event key."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Date,
    DateTime,
    Dialect,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.types import TypeDecorator

metadata = MetaData()


class UtcDateTime(TypeDecorator[dt.datetime]):
    """DateTime(timezone=True) read back aware, in UTC: SQLite gives naive datetimes back."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_result_value(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def claim_columns() -> list[Column[Any]]:
    """A claim after its key: 'claimed' while a process posts, 'posted' with Slack's message ts."""
    return [
        Column("state", String(16), nullable=False),
        Column("owner", String(200), nullable=False),
        Column("claimed_at", UtcDateTime(), nullable=False),
        Column("message_ts", String(32), nullable=True),
    ]


def keys(**types: Any) -> list[Column[Any]]:
    """The primary key's columns in the order named, `name=type`."""
    return [Column(name, type_, primary_key=True) for name, type_ in types.items()]


def required(**types: Any) -> list[Column[Any]]:
    """Non-null columns in the order named, `name=type`: a table reads as its list of names."""
    return [Column(name, type_, nullable=False) for name, type_ in types.items()]


daily_posts = Table(
    "daily_posts",
    metadata,
    *keys(channel=String(64), day=Date),
    *required(entry_id=String(64)),
    *claim_columns(),
    Column("posted_at", UtcDateTime(), nullable=True),
)

bot_threads = Table(
    "bot_threads",
    metadata,
    *keys(channel=String(64), thread_ts=String(32)),
    *required(entry_id=String(64), created_at=UtcDateTime()),
)

handled_events = Table(
    "handled_events",
    metadata,
    # 'message:<channel>:<ts>' (rows 'event:<event_id>' of older versions are pruned like any).
    Column("key", String(200), primary_key=True),
    Column("handled_at", UtcDateTime(), nullable=False, index=True),
)

# Entries whose card Slack refused in a channel for the message itself (invalid_blocks,
# msg_too_long, …; migration 0004): `card` is the SHA-256 of the refused card, so an edited entry
# (another card) is picked again.
daily_refused = Table(
    "daily_refused",
    metadata,
    *keys(channel=String(64), entry_id=String(64), card=String(64)),
    *required(error=String(64), refused_at=UtcDateTime()),
)

# Entry vectors of the optional semantic search (migration 0005), by embedding model and the
# SHA-256 of the text embedded: an entry whose text did not change is not embedded again.
# `vector` is the float32 values, little-endian.
entry_vectors = Table(
    "entry_vectors",
    metadata,
    *keys(model=String(200), content_hash=String(64)),
    *required(dims=Integer, vector=LargeBinary, created_at=UtcDateTime()),
)

# -- subscriptions (migration 0002) -----------------------------------------------------------

subscriptions = Table(
    "subscriptions",
    metadata,
    *keys(channel=String(64)),
    # topics: JSON list of {key, label, query}, empty = every topic; days: day numbers, Monday = 0,
    # comma-separated.
    *required(topics=Text, hour=Integer, minute=Integer, days=String(32), timezone=String(64)),
    *required(strict=Boolean, announce=Boolean, updated_by=String(64), updated_at=UtcDateTime()),
)

# Every entry id the bot has seen in the digest folder, and the batch it arrived with
# ('baseline' for what was there when the table was first filled: never announced).
digest_entries = Table(
    "digest_entries",
    metadata,
    *keys(entry_id=String(64)),
    Column("batch", String(64), nullable=False, index=True),
    *required(seen_at=UtcDateTime()),
)

# One announcement per (channel, batch): claimed, then posted — like daily_posts.
announcements = Table(
    "announcements", metadata, *keys(channel=String(64), batch=String(64)), *claim_columns()
)

# -- GitHub's facts about the digest's PRs (migration 0005) ------------------------------------

# `facts`: JSON sections as fetched (pull, reviews, timeline); `etags`: each section's ETag for
# If-None-Match; `fetched_at`: last 200, `checked_at`: last answer (200 or 304).
pr_facts = Table(
    "pr_facts",
    metadata,
    *keys(repo=String(200), pr=Integer),
    *required(facts=Text, etags=Text, fetched_at=UtcDateTime(), checked_at=UtcDateTime()),
)

# One refresh per slot (a GITHUB_REFRESH period, or a set of new entries), across replicas.
github_refreshes = Table("github_refreshes", metadata, *keys(slot=String(64)), *claim_columns())

# Until when GitHub asked that nothing be sent (a spent quota's reset, Retry-After), per API URL:
# every replica and every `vllm-digest github refresh` waits, not only the process that was told.
github_waits = Table(
    "github_waits",
    metadata,
    *keys(api_url=String(200)),
    *required(until=UtcDateTime()),
)
