"""Apply the shipped Alembic migrations from code: no alembic.ini, no dependence on the cwd.

Called at start (`serve`, `post-today`) and by `vllm-digest db upgrade`. Safe when several
processes start at once: SQLite serialises them with BEGIN IMMEDIATE, PostgreSQL with a
transaction-scoped advisory lock; the second one finds the schema current and does nothing.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Any constant: identifies "vllm-digest schema migration" among advisory locks.
ADVISORY_LOCK_KEY = 0x766C6C6D  # 'vllm'


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option(
        "sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%")
    )
    return config


def head_revision(engine: Engine) -> str | None:
    return ScriptDirectory.from_config(alembic_config(engine)).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> tuple[str | None, str | None]:
    """Bring the schema to the newest revision; (revision before, revision after)."""
    config = alembic_config(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
        before = MigrationContext.configure(conn).get_current_revision()
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        after = MigrationContext.configure(conn).get_current_revision()
    return before, after
