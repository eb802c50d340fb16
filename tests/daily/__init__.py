"""Daily post tests: picker, store (SQLite and PostgreSQL), exactly-once posting, scheduler."""
