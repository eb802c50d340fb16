"""Tables of the store. Migrations (chatbot/store/migrations) create them; this module only names them.

Every guarantee the bot makes across processes rests on a primary key here:
one daily post per (channel, day), one owner entry per (channel, thread ts), one handling per
event key.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, Column, Date, DateTime, Integer, LargeBinary, MetaData, String, Table, Text

metadata = MetaData()


def claim_columns() -> list[Column[Any]]:
    """A claim after its key: 'claimed' while a process is posting, 'posted' once Slack's message
    ts is recorded (daily posts, announcements)."""
    return [
        Column("state", String(16), nullable=False),
        Column("owner", String(200), nullable=False),
        Column("claimed_at", DateTime(timezone=True), nullable=False),
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
    Column("posted_at", DateTime(timezone=True), nullable=True),
)

bot_threads = Table(
    "bot_threads",
    metadata,
    *keys(channel=String(64), thread_ts=String(32)),
    *required(entry_id=String(64), created_at=DateTime(timezone=True)),
)

handled_events = Table(
    "handled_events",
    metadata,
    # 'message:<channel>:<ts>' (rows 'event:<event_id>' of older versions are pruned like any).
    Column("key", String(200), primary_key=True),
    Column("handled_at", DateTime(timezone=True), nullable=False, index=True),
)

# Entries whose card Slack refused in a channel for the message itself (invalid_blocks,
# msg_too_long, …; migration 0004): `card` is the SHA-256 of the refused card, so an edited entry
# (another card) is picked again.
daily_refused = Table(
    "daily_refused",
    metadata,
    *keys(channel=String(64), entry_id=String(64), card=String(64)),
    *required(error=String(64), refused_at=DateTime(timezone=True)),
)

# Entry vectors of the optional semantic search (migration 0005), by embedding model and the
# SHA-256 of the text embedded: an entry whose text did not change is not embedded again.
# `vector` is the float32 values, little-endian.
entry_vectors = Table(
    "entry_vectors",
    metadata,
    *keys(model=String(200), content_hash=String(64)),
    *required(dims=Integer, vector=LargeBinary, created_at=DateTime(timezone=True)),
)

# -- subscriptions (migration 0002) -----------------------------------------------------------

subscriptions = Table(
    "subscriptions",
    metadata,
    Column("channel", String(64), primary_key=True),
    # topics: JSON list of {key, label, query}, empty = every topic; days: day numbers, Monday = 0,
    # comma-separated.
    *required(topics=Text, hour=Integer, minute=Integer, days=String(32), timezone=String(64)),
    *required(strict=Boolean, announce=Boolean, updated_by=String(64), updated_at=DateTime(timezone=True)),
)

# Every entry id the bot has seen in the digest folder, and the batch it arrived with
# ('baseline' for what was there when the table was first filled: never announced).
digest_entries = Table(
    "digest_entries",
    metadata,
    Column("entry_id", String(64), primary_key=True),
    Column("batch", String(64), nullable=False, index=True),
    Column("seen_at", DateTime(timezone=True), nullable=False),
)

# One announcement per (channel, batch): claimed, then posted — like daily_posts.
announcements = Table(
    "announcements",
    metadata,
    Column("channel", String(64), primary_key=True),
    Column("batch", String(64), primary_key=True),
    *claim_columns(),
)

# -- GitHub's facts about the digest's PRs (migration 0005) ------------------------------------

# `facts`: JSON sections as fetched (pull, reviews, timeline); `etags`: each section's ETag for
# If-None-Match; `fetched_at`: last 200, `checked_at`: last answer (200 or 304).
pr_facts = Table(
    "pr_facts",
    metadata,
    *keys(repo=String(200), pr=Integer),
    *required(facts=Text, etags=Text, fetched_at=DateTime(timezone=True), checked_at=DateTime(timezone=True)),
)

# One refresh per slot (a GITHUB_REFRESH period, or a set of new entries), across replicas.
github_refreshes = Table(
    "github_refreshes",
    metadata,
    Column("slot", String(64), primary_key=True),
    *claim_columns(),
)

# Until when GitHub asked that nothing be sent (a spent quota's reset, Retry-After), per API URL:
# every replica and every `vllm-digest github refresh` waits, not only the process that was told.
github_waits = Table(
    "github_waits",
    metadata,
    *keys(api_url=String(200)),
    *required(until=DateTime(timezone=True)),
)
