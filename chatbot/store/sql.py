"""The SQL store: daily posts with their claims, the bot's threads, and handled events.

One class over one SQLAlchemy engine, SQLite or PostgreSQL alike. Every method is one short
transaction; every cross-process guarantee comes from a primary key (see schema.py), never from
a check-then-write in Python.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Delete, Engine, Update, bindparam, delete, literal, select, update
from sqlalchemy.engine import Connection

from chatbot.daily.picker import PastPost
from chatbot.store import migrate
from chatbot.store.claims import take_over
from chatbot.store.engine import dialect_insert, make_engine, store_errors, unavailable
from chatbot.store.schema import bot_threads, daily_posts, daily_refused, handled_events

CLAIMED = "claimed"
POSTED = "posted"


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    """SQLite gives naive datetimes back; everything the store writes is UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class DailyPost:
    """The row of one (channel, day): claimed by `owner`, or posted as `message_ts`."""

    channel: str
    day: dt.date
    entry_id: str
    state: str
    owner: str
    claimed_at: dt.datetime
    message_ts: str | None
    posted_at: dt.datetime | None

    @property
    def posted(self) -> bool:
        return self.state == POSTED


class ClaimOutcome(enum.Enum):
    CLAIMED = "claimed"  # the row is new: this process posts
    TAKEN_OVER = "taken over"  # a stale claim: look in Slack for its post before posting
    POSTED = "posted"  # done already: nothing to do
    BUSY = "busy"  # another live process holds the claim


@dataclass(frozen=True)
class Claim:
    outcome: ClaimOutcome
    post: DailyPost


# Seconds /readyz waits for the database before calling it unready.
READY_DEADLINE = 2.0


class SqlStore:
    """Daily posts, ThreadRegistry (`register`, `entry_for`) and event dedup on one database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._ping_lock = threading.Lock()
        self._pinger: ThreadPoolExecutor | None = None
        self._ping: Future[str] | None = None
        # Built once: every slash command and button press marks a key (slack/ledger.py), and
        # building the INSERT … ON CONFLICT DO NOTHING RETURNING anew, with its cache key, cost
        # about as much CPU as running it (docs/slack.md, "Where an uncached command's CPU goes").
        self._mark_statement = (
            self._insert_ignore(handled_events)
            .values(key=bindparam("key"), handled_at=bindparam("handled_at"))
            .returning(literal(1))
        )

    @classmethod
    def open(cls, url: str, *, upgrade: bool = True) -> SqlStore:
        """A store for DATABASE_URL, its schema brought up to date unless told not to; a
        database that cannot be opened raises StoreUnavailable (one line, password masked)."""
        try:
            store = cls(make_engine(url))
            store.ping(raises=True)
        except store_errors() as exc:
            raise unavailable(url, exc) from None
        if upgrade:
            store.upgrade()
        return store

    def upgrade(self) -> tuple[str | None, str | None]:
        try:
            return migrate.upgrade(self.engine)
        except store_errors() as exc:
            raise unavailable(self.engine.url.render_as_string(hide_password=False), exc) from None

    def ping(self, *, raises: bool = False, write: bool = False) -> str:
        """ "ok" when the database answers a query (and, with `write`, takes a write), else its
        one-line error (readiness). A SQLite file on a full disk still answers reads while every
        write fails: the write probe rewrites the schema's version row with itself."""
        try:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1").scalar()
        except store_errors() as exc:
            if raises:
                raise
            return str(unavailable(self.engine.url.render_as_string(hide_password=False), exc))
        return self._write_probe() if write else "ok"

    def _write_probe(self) -> str:
        try:
            with self.engine.begin() as conn:
                conn.exec_driver_sql("UPDATE alembic_version SET version_num = version_num")
        except store_errors() as exc:
            line = str(unavailable(self.engine.url.render_as_string(hide_password=False), exc))
            return line.replace("cannot open the database", "the database takes no writes", 1)
        return "ok"

    def ready(self, deadline: float = READY_DEADLINE) -> str:
        """`ping(write=True)` for the readiness probe, within `deadline` seconds: a SQLite file another
        process locked held /readyz for the 30 s busy timeout. One ping at a time runs on a
        worker thread; while it waits, later probes wait on the same one (no pile-up)."""
        with self._ping_lock:
            if self._pinger is None:
                self._pinger = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ping")
            if self._ping is None or self._ping.done():
                self._ping = self._pinger.submit(self.ping, write=True)
            ping = self._ping
        try:
            return ping.result(timeout=deadline)
        except TimeoutError:
            url = self.engine.url.render_as_string(hide_password=True)
            return f"setting DATABASE_URL {url}: the database gave no answer within {deadline:g} s"

    def close(self) -> None:
        if self._pinger is not None:
            self._pinger.shutdown(wait=False)
        self.engine.dispose()

    # -- daily posts -------------------------------------------------------------------------

    def daily_post(self, channel: str, day: dt.date) -> DailyPost | None:
        with self.engine.begin() as conn:
            return self._daily_post(conn, channel, day)

    def history(self, channel: str) -> list[PastPost]:
        """What the channel was sent, oldest first: the picker's input."""
        query = (
            select(daily_posts.c.day, daily_posts.c.entry_id)
            .where(daily_posts.c.channel == channel, daily_posts.c.state == POSTED)
            .order_by(daily_posts.c.day)
        )
        with self.engine.begin() as conn:
            return [PastPost(row.day, row.entry_id) for row in conn.execute(query)]

    def claim(
        self,
        channel: str,
        day: dt.date,
        entry_id: str,
        owner: str,
        *,
        now: dt.datetime,
        is_stale: Callable[[DailyPost], bool],
    ) -> Claim:
        """Claim (channel, day) for posting `entry_id`; the primary key makes one process win.

        A claim left by a process that died (`is_stale`) is taken over with a compare-and-set
        on its owner; the row keeps the entry that process was posting.
        """
        with self.engine.begin() as conn:
            inserted = self._inserted(
                conn,
                self._insert_ignore(daily_posts).values(
                    channel=channel, day=day, entry_id=entry_id, state=CLAIMED, owner=owner, claimed_at=now
                ),
            )
            current = self._daily_post(conn, channel, day)
        assert current is not None
        if inserted:
            return Claim(ClaimOutcome.CLAIMED, current)
        if current.posted:
            return Claim(ClaimOutcome.POSTED, current)
        if not is_stale(current):
            return Claim(ClaimOutcome.BUSY, current)
        with self.engine.begin() as conn:
            taken = take_over(conn, daily_posts, {"channel": channel, "day": day}, current.owner, owner, now)
            after = self._daily_post(conn, channel, day)
        assert after is not None
        if taken:
            return Claim(ClaimOutcome.TAKEN_OVER, after)
        return Claim(ClaimOutcome.POSTED if after.posted else ClaimOutcome.BUSY, after)

    def record_posted(
        self,
        channel: str,
        day: dt.date,
        owner: str,
        message_ts: str,
        *,
        now: dt.datetime,
        entry_id: str | None = None,
    ) -> bool:
        """Mark the claim posted with Slack's ts; False when this owner no longer holds it."""
        values: dict[str, object] = {"state": POSTED, "message_ts": message_ts, "posted_at": now}
        if entry_id is not None:
            values["entry_id"] = entry_id
        return self._changes_one(update(daily_posts).where(*_held(channel, day, owner)).values(**values))

    def mark_unknown(self, channel: str, day: dt.date, owner: str, prefix: str) -> bool:
        """Keep this owner's claim but mark it (`prefix` + owner): its post got no answer, so
        whoever runs next takes it over and looks in Slack before posting."""
        unposted = _held(channel, day, owner, daily_posts.c.state == CLAIMED)
        return self._changes_one(update(daily_posts).where(*unposted).values(owner=(prefix + owner)[:200]))

    def release(self, channel: str, day: dt.date, owner: str) -> bool:
        """Drop this owner's unposted claim (Slack refused the post), so a later run retries."""
        return self._changes_one(
            delete(daily_posts).where(*_held(channel, day, owner, daily_posts.c.state == CLAIMED))
        )

    def refuse_entry(self, channel: str, entry_id: str, card: str, error: str, *, now: dt.datetime) -> bool:
        """Note that Slack refused this card of the entry in the channel for the message itself,
        so the picker skips it there; True for the first run that notes it (it logs)."""
        values = {
            "channel": channel,
            "entry_id": entry_id,
            "card": card,
            "error": error[:64],
            "refused_at": now,
        }
        with self.engine.begin() as conn:
            return self._inserted(conn, self._insert_ignore(daily_refused).values(**values))

    def refused_entries(self, channel: str) -> set[tuple[str, str]]:
        """(entry id, card) pairs Slack refused in the channel: the picker's exclusions."""
        query = select(daily_refused.c.entry_id, daily_refused.c.card).where(
            daily_refused.c.channel == channel
        )
        with self.engine.begin() as conn:
            return {(row.entry_id, row.card) for row in conn.execute(query)}

    def _changes_one(self, statement: Update | Delete) -> bool:
        """Run the statement in its own transaction; whether it changed exactly one row."""
        with self.engine.begin() as conn:
            return conn.execute(statement).rowcount == 1

    # -- ThreadRegistry ----------------------------------------------------------------------

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None:
        """Remember that the bot's message `thread_ts` in `channel` is about `entry_id` (first wins)."""
        with self.engine.begin() as conn:
            conn.execute(
                self._insert_ignore(bot_threads).values(
                    channel=channel, thread_ts=thread_ts, entry_id=entry_id, created_at=utc_now()
                )
            )

    def entry_for(self, channel: str, thread_ts: str) -> str | None:
        """The entry id of a thread the bot owns, None for anybody else's thread."""
        query = select(bot_threads.c.entry_id).where(
            bot_threads.c.channel == channel, bot_threads.c.thread_ts == thread_ts
        )
        with self.engine.begin() as conn:
            value = conn.execute(query).scalar_one_or_none()
        return str(value) if value is not None else None

    # -- handled events ----------------------------------------------------------------------

    def mark_handled(self, key: str, *, within: dt.timedelta | None = None) -> bool:
        """The ledger of `chatbot.slack.ledger` across processes: True for the first caller of
        `key` in any process (a message's retries and second event, replayed commands and
        presses). With `within`: also True when the key was last marked longer ago
        than that (one share per place and minute); a compare-and-set, so one of two racing
        callers wins."""
        if self._mark(key):
            return True
        if within is None:
            return False
        now = utc_now()
        with self.engine.begin() as conn:
            refreshed = conn.execute(
                update(handled_events)
                .where(handled_events.c.key == fitted_key(key), handled_events.c.handled_at < now - within)
                .values(handled_at=now)
            ).rowcount
        return bool(refreshed == 1)

    def forget_handled(self, key: str) -> None:
        """Drop a mark, so the next attempt is acted on (the work it stood for failed)."""
        with self.engine.begin() as conn:
            conn.execute(delete(handled_events).where(handled_events.c.key == fitted_key(key)))

    def prune_handled_events(self, older_than: dt.datetime) -> int:
        """Forget handled events before a time (Slack stops retrying after minutes)."""
        with self.engine.begin() as conn:
            return int(
                conn.execute(delete(handled_events).where(handled_events.c.handled_at < older_than)).rowcount
            )

    def _mark(self, key: str) -> bool:
        with self.engine.begin() as conn:
            marked = conn.execute(self._mark_statement, {"key": fitted_key(key), "handled_at": utc_now()})
            return marked.first() is not None

    # -- helpers -----------------------------------------------------------------------------

    def _insert_ignore(self, table: Any) -> Any:
        """INSERT … ON CONFLICT DO NOTHING: the first writer inserts, the others do nothing."""
        return dialect_insert(self.engine, table).on_conflict_do_nothing()

    @staticmethod
    def _inserted(conn: Connection, statement: Any) -> bool:
        """Whether an insert-ignore wrote its row (RETURNING: psycopg reports no rowcount for it)."""
        return conn.execute(statement.returning(literal(1))).first() is not None

    @staticmethod
    def _daily_post(conn: Connection, channel: str, day: dt.date) -> DailyPost | None:
        row = conn.execute(
            select(daily_posts).where(daily_posts.c.channel == channel, daily_posts.c.day == day)
        ).one_or_none()
        if row is None:
            return None
        claimed_at = _utc(row.claimed_at)
        assert claimed_at is not None
        return DailyPost(
            channel=row.channel,
            day=row.day,
            entry_id=row.entry_id,
            state=row.state,
            owner=row.owner,
            claimed_at=claimed_at,
            message_ts=row.message_ts,
            posted_at=_utc(row.posted_at),
        )


def _held(channel: str, day: dt.date, owner: str, *more: ColumnElement[bool]) -> list[ColumnElement[bool]]:
    """The conditions of `owner`'s claim of (channel, day), and `more`."""
    return [daily_posts.c.channel == channel, daily_posts.c.day == day, daily_posts.c.owner == owner, *more]


# handled_events.key is a String(200). Keys are built from what Slack sends (trigger ids, action
# ids, unfurl ids); a longer one made PostgreSQL refuse the insert (SQLite stores any length), so
# the request went unanswered. A longer key is kept as its head and a digest of the whole: the
# same key always maps to the same row, and two keys share one only if SHA-256 collides.
KEY_WIDTH = 200


def fitted_key(key: str) -> str:
    """`key`, or when it is longer than the column: its head, `#`, and the SHA-256 of all of it."""
    if len(key) <= KEY_WIDTH:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[: KEY_WIDTH - len(digest) - 1]}#{digest}"
