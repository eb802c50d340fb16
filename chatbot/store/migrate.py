"""Apply the shipped Alembic migrations from code: no alembic.ini, no dependence on the cwd.

Safe when several processes start at once: SQLite serialises them with BEGIN IMMEDIATE,
PostgreSQL with an advisory lock. A database already at the head named by the scripts' own
`revision` lines is one query, without importing Alembic (a tenth of a second of CPU: the
`serve` ready row of bench/scale.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Any constant: identifies "vllm-digest schema migration" among advisory locks.
ADVISORY_LOCK_KEY = 0x766C6C6D  # 'vllm'
# Alembic's default version table (env.py does not name another one).
VERSION_TABLE = "alembic_version"

# `revision = "0003"` and `down_revision = "0002"` (or None) as the revision scripts write them.
_REVISION_LINE = re.compile(r"""^revision\s*(?::[^=\n]*)?=\s*["']([^"'\n]+)["']\s*$""", re.M)
_DOWN_LINE = re.compile(r"""^down_revision\s*(?::[^=\n]*)?=\s*(?:None|["']([^"'\n]+)["'])\s*$""", re.M)


@contextmanager
def _quiet_plugins() -> Iterator[None]:
    """Alembic logs each of its plugins at INFO when first imported: noise in the bot's log."""
    plugins = logging.getLogger("alembic.runtime.plugins")
    level = plugins.level
    plugins.setLevel(logging.WARNING)
    try:
        yield
    finally:
        plugins.setLevel(level)


def alembic_config(engine: Engine) -> Config:
    with _quiet_plugins():
        from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option(
        "sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%")
    )
    return config


@lru_cache(maxsize=1)
def shipped_head(versions: Path = MIGRATIONS / "versions") -> str | None:
    """The newest revision of the shipped scripts, read from their `revision` and `down_revision`
    lines without Alembic; None when they are not one plain line of revisions (a script whose lines
    this cannot read, a merge, two heads), and then Alembic decides."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in sorted(versions.glob("*.py")):
        if script.name == "__init__.py":
            continue
        source = script.read_text(encoding="utf-8")
        revision, down = _REVISION_LINE.findall(source), _DOWN_LINE.findall(source)
        if len(revision) != 1 or len(down) != 1:
            return None
        revisions.add(revision[0])
        parents.update(d for d in down if d)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


def stored_revisions(conn: Connection) -> tuple[str, ...]:
    """The revisions the database's version table holds (none for a new database)."""
    if not conn.dialect.has_table(conn, VERSION_TABLE):
        return ()
    return tuple(row[0] for row in conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")))


def upgrade(engine: Engine) -> tuple[str | None, str | None]:
    """Bring the schema to the newest revision; (revision before, revision after). A database
    already at the shipped head is left alone without importing Alembic."""
    head = shipped_head()
    if head is not None:
        with engine.connect() as conn:
            if stored_revisions(conn) == (head,):
                return head, head
    return _alembic_upgrade(engine)


def _alembic_upgrade(engine: Engine) -> tuple[str | None, str | None]:
    """Alembic's upgrade to head, under the PostgreSQL advisory lock."""
    with _quiet_plugins():
        from alembic import command
        from alembic.runtime.migration import MigrationContext

    config = alembic_config(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
        before = MigrationContext.configure(conn).get_current_revision()
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
        after = MigrationContext.configure(conn).get_current_revision()
    return before, after
