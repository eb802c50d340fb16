"""Alembic environment: runs on the connection chatbot.store.migrate hands in.

The caller owns the connection and its transaction (and, on PostgreSQL, an advisory lock), so
several processes starting at once apply each migration exactly once.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from chatbot.store.schema import metadata

config = context.config
connection = config.attributes.get("connection")

if context.is_offline_mode():
    context.configure(
        url=config.get_main_option("sqlalchemy.url"), target_metadata=metadata, literal_binds=True
    )
    with context.begin_transaction():
        context.run_migrations()
elif connection is not None:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    # Plain `alembic -c chatbot/store/migrations/alembic.ini ...` from a developer's shell.
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite:///vllm-digest.db")
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
