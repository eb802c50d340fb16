"""The store adapter: SQLAlchemy over SQLite (default) or PostgreSQL, schema by Alembic migrations.

Holds what was posted where, thread ownership (`ThreadRegistry`), handled events. May import the core.
"""

from chatbot.store.engine import StoreUnavailable, masked
from chatbot.store.sql import Claim, ClaimOutcome, DailyPost, SqlStore, utc_now
from chatbot.store.subscriptions import Batch, SubscriptionStore
from chatbot.store.threads import InMemoryThreadRegistry, ThreadRegistry
from chatbot.store.vectors import VectorStore

__all__ = [
    "Batch",
    "Claim",
    "ClaimOutcome",
    "DailyPost",
    "InMemoryThreadRegistry",
    "SqlStore",
    "StoreUnavailable",
    "SubscriptionStore",
    "ThreadRegistry",
    "VectorStore",
    "masked",
    "utc_now",
]
