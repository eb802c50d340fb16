"""The store adapter: SQLAlchemy over SQLite (default) or PostgreSQL, schema by Alembic."""

from chatbot.store.sql import Claim, ClaimOutcome, DailyPost, SqlStore

__all__ = ["Claim", "ClaimOutcome", "DailyPost", "SqlStore"]
