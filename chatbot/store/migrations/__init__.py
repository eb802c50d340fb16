"""Alembic migrations of the store, shipped in the package and run from code (chatbot.store.migrate)."""
