"""The store adapter: SQLAlchemy over SQLite (default) or PostgreSQL, schema by Alembic migrations.

Holds what was posted where, thread ownership (`ThreadRegistry`), handled events. May import the core.
"""

from chatbot.store.engine import StoreUnavailable, masked
from chatbot.store.outage import STORE_FAILURES, OutageQueue, RememberedThreads, attempt_or_hold
from chatbot.store.sql import Claim, ClaimOutcome, DailyPost, SqlStore, utc_now
from chatbot.store.subscriptions import Batch, SubscriptionStore
from chatbot.store.threads import InMemoryThreadRegistry, ThreadRegistry
from chatbot.store.vectors import VectorStore

__all__ = [
    "STORE_FAILURES",
    "Batch",
    "Claim",
    "ClaimOutcome",
    "DailyPost",
    "InMemoryThreadRegistry",
    "OutageQueue",
    "RememberedThreads",
    "SqlStore",
    "StoreUnavailable",
    "SubscriptionStore",
    "ThreadRegistry",
    "VectorStore",
    "attempt_or_hold",
    "masked",
    "utc_now",
]
