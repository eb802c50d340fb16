"""Engines for SQLite and PostgreSQL, set up so that concurrent processes don't fail.

SQLite: WAL, a busy timeout, and `BEGIN IMMEDIATE` for every transaction (a deferred one that
reads then writes hits SQLITE_BUSY once another process wrote). PostgreSQL: a connect timeout,
so a server that accepts and never answers cannot hang the start. Failures at start become
`StoreUnavailable`: one line naming DATABASE_URL, password masked.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, literal
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

log = logging.getLogger(__name__)

SQLITE_BUSY_TIMEOUT_MS = 30_000
# Seconds to wait for PostgreSQL to accept and answer a connection (unless the URL sets one).
CONNECT_TIMEOUT = 5


class StoreUnavailable(RuntimeError):
    """The database at DATABASE_URL cannot be opened or used; the message is one line."""


def masked(url: str) -> str:
    """DATABASE_URL as it can be shown: the password replaced by ***."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(not a database URL)"


def short(error: BaseException, limit: int = 200) -> str:
    """A database error as one line: the driver's message (SQLAlchemy's adds its SQL and a link)."""
    cause: BaseException = getattr(error, "orig", None) or error
    return " ".join(str(cause).split())[:limit] or type(cause).__name__


def unavailable(url: str, error: BaseException) -> StoreUnavailable:
    """One line for a database error: which URL (masked) and the driver's first line, no traceback."""
    text = short(error, 300)
    try:
        password = make_url(url).password
    except ArgumentError:
        password = None
    if password:
        text = text.replace(str(password), "***")
    return StoreUnavailable(f"setting DATABASE_URL {masked(url)}: cannot open the database: {text}")


def store_errors() -> tuple[type[BaseException], ...]:
    """Everything opening or using a store can raise for a bad or unreachable database."""
    return (SQLAlchemyError, OSError, ImportError, sqlite3.Error)


def _ensure_wal(cursor: Any) -> None:
    """Switch the file to WAL once (it persists). Changing the journal mode fails at once, without
    the busy handler, while another process opens the same new file: retried up to the timeout."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    delay = 0.01
    while True:
        try:
            if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


class DatabaseFileGone(sqlite3.OperationalError):
    """The SQLite file the store opened was deleted or replaced while the bot ran."""


class SqliteFile:
    """The SQLite file by its (device, inode). SQLite keeps writing to an unlinked inode and the
    next connection creates an empty file at the path: each day's post would be recorded nowhere
    and posted again after a restart. Once the file is gone every connection fails (logged once)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.identity: tuple[int, int] | None = None
        self.gone: str | None = None

    def check(self) -> None:
        if self.identity is None:
            return
        if self.gone is None:
            try:
                st = self.path.stat()
                found: tuple[int, int] | None = (st.st_dev, st.st_ino)
            except FileNotFoundError:
                found = None
            if found == self.identity:
                return
            what = "deleted" if found is None else "replaced by another file"
            self.gone = (
                f"the database file {self.path} was {what} while the bot ran; not writing to a new one "
                "(restore the file, or restart to start a new database)"
            )
            log.error("setting DATABASE_URL sqlite:///%s: %s", self.path, self.gone)
        raise DatabaseFileGone(self.gone)

    def opened(self) -> None:
        if self.identity is None:
            st = self.path.stat()
            self.identity = (st.st_dev, st.st_ino)


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite DATABASE_URL (None for :memory:, `file:` URIs and other databases)."""
    parsed = make_url(url)
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    return None if database.startswith("file:") else Path(database).expanduser()


def make_engine(url: str) -> Engine:
    """An engine for DATABASE_URL; a SQLite file's folder is created when missing."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        connect_args = {} if "connect_timeout" in parsed.query else {"connect_timeout": CONNECT_TIMEOUT}
        return create_engine(url, pool_pre_ping=True, pool_timeout=CONNECT_TIMEOUT, connect_args=connect_args)
    path = sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
    file = SqliteFile(path) if path is not None else None
    if file is not None:  # checked before every connection and checkout (a stat: microseconds)
        event.listen(engine, "do_connect", lambda *_: file.check())
        event.listen(engine, "checkout", lambda *_: file.check())

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide where transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        _ensure_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()
        if file is not None:
            file.opened()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def dialect_insert(bind: Engine | Connection, table: Any) -> postgresql.Insert | sqlite.Insert:
    """The INSERT with ON CONFLICT of the database (the PostgreSQL dialect, 20 ms to import, only
    where the database is one)."""
    if bind.dialect.name == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert(table)
    from sqlalchemy.dialects import sqlite

    return sqlite.insert(table)


def insert_ignore(bind: Engine | Connection, table: Any) -> Any:
    """INSERT … ON CONFLICT DO NOTHING: the first writer inserts, the others do nothing."""
    return dialect_insert(bind, table).on_conflict_do_nothing()


def inserted(conn: Connection, statement: Any) -> bool:
    """Whether an insert-ignore wrote its row (RETURNING: psycopg reports no rowcount for it)."""
    return conn.execute(statement.returning(literal(1))).first() is not None
