"""Tables of the store. Migrations (chatbot/store/migrations) create them; this module only names them.

Every guarantee the bot makes across processes rests on a primary key here:
one daily post per (channel, day), one owner entry per (channel, thread ts), one handling per
event key.
"""

from __future__ import annotations

from sqlalchemy import Column, Date, DateTime, MetaData, String, Table

metadata = MetaData()

daily_posts = Table(
    "daily_posts",
    metadata,
    Column("channel", String(64), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("entry_id", String(64), nullable=False),
    # 'claimed' while a process is posting, 'posted' once Slack's message ts is recorded.
    Column("state", String(16), nullable=False),
    Column("owner", String(200), nullable=False),
    Column("claimed_at", DateTime(timezone=True), nullable=False),
    Column("message_ts", String(32), nullable=True),
    Column("posted_at", DateTime(timezone=True), nullable=True),
)

bot_threads = Table(
    "bot_threads",
    metadata,
    Column("channel", String(64), primary_key=True),
    Column("thread_ts", String(32), primary_key=True),
    Column("entry_id", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

handled_events = Table(
    "handled_events",
    metadata,
    # 'message:<channel>:<ts>' (rows 'event:<event_id>' of older versions are pruned like any).
    Column("key", String(200), primary_key=True),
    Column("handled_at", DateTime(timezone=True), nullable=False, index=True),
)
