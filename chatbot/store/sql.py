"""The SQL store: daily posts with their claims, the bot's threads, and handled events.

Every method is one short transaction; every cross-process guarantee comes from a primary key
(schema.py), never from a check-then-write in Python.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy import Engine, bindparam, delete, literal, select, update
from sqlalchemy.engine import Connection

from chatbot.daily.picker import PastPost
from chatbot.store import claims, migrate
from chatbot.store.claims import POSTED
from chatbot.store.engine import insert_ignore, inserted, make_engine, store_errors, unavailable
from chatbot.store.schema import bot_threads, daily_posts, daily_refused, handled_events


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
        # Built once: building the INSERT … ON CONFLICT DO NOTHING RETURNING anew per command cost
        # about as much CPU as running it (docs/slack.md, "Where an uncached command's CPU goes").
        self._mark_statement = (
            insert_ignore(engine, handled_events)
            .values(key=bindparam("key"), handled_at=bindparam("handled_at"))
            .returning(literal(1))
        )

    @classmethod
    def open(cls, url: str, *, upgrade: bool = True) -> SqlStore:
        """A store for DATABASE_URL, migrated unless told not to; StoreUnavailable (one line,
        password masked) when the database cannot be opened."""
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
            raise self._unavailable(exc) from None

    def _unavailable(self, exc: BaseException) -> Exception:
        return unavailable(self.engine.url.render_as_string(hide_password=False), exc)

    def ping(self, *, raises: bool = False, write: bool = False) -> str:
        """ "ok" when the database answers a query (and, with `write`, takes a write), else its
        one-line error. A SQLite file on a full disk still answers reads while every write fails:
        the write probe rewrites the schema's version row with itself."""
        try:
            with self.engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1").scalar()
        except store_errors() as exc:
            if raises:
                raise
            return str(self._unavailable(exc))
        if not write:
            return "ok"
        try:
            with self.engine.begin() as conn:
                conn.exec_driver_sql("UPDATE alembic_version SET version_num = version_num")
        except store_errors() as exc:
            return str(self._unavailable(exc)).replace(
                "cannot open the database", "the database takes no writes", 1
            )
        return "ok"

    def ready(self, deadline: float = READY_DEADLINE) -> str:
        """`ping(write=True)` within `deadline` seconds (a SQLite file another process locked held
        /readyz for the 30 s busy timeout): one ping at a time on a worker thread, later probes
        wait on the same one."""
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
            return _daily_post(conn, channel, day)

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
        """Claim (channel, day) for posting `entry_id`. A claim left by a process that died
        (`is_stale`) is taken over; the row keeps the entry that process was posting."""
        key = {"channel": channel, "day": day}
        with self.engine.begin() as conn:
            new = claims.claim(conn, daily_posts, key, owner, now, entry_id=entry_id)
            current = _daily_post(conn, channel, day)
        assert current is not None
        if new:
            return Claim(ClaimOutcome.CLAIMED, current)
        if current.posted:
            return Claim(ClaimOutcome.POSTED, current)
        if not is_stale(current):
            return Claim(ClaimOutcome.BUSY, current)
        with self.engine.begin() as conn:
            taken = claims.take_over(conn, daily_posts, key, current.owner, owner, now)
            after = _daily_post(conn, channel, day)
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
        mine = claims.held(daily_posts, {"channel": channel, "day": day}, owner)
        with self.engine.begin() as conn:
            return claims.changed_one(conn, update(daily_posts).where(*mine).values(**values))

    def mark_unknown(self, channel: str, day: dt.date, owner: str, prefix: str) -> bool:
        with self.engine.begin() as conn:
            return claims.mark_unknown(conn, daily_posts, {"channel": channel, "day": day}, owner, prefix)

    def release(self, channel: str, day: dt.date, owner: str) -> bool:
        with self.engine.begin() as conn:
            return claims.release(conn, daily_posts, {"channel": channel, "day": day}, owner)

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
            return inserted(conn, insert_ignore(conn, daily_refused).values(**values))

    def refused_entries(self, channel: str) -> set[tuple[str, str]]:
        """(entry id, card) pairs Slack refused in the channel: the picker's exclusions."""
        query = select(daily_refused.c.entry_id, daily_refused.c.card).where(
            daily_refused.c.channel == channel
        )
        with self.engine.begin() as conn:
            return {(row.entry_id, row.card) for row in conn.execute(query)}

    # -- ThreadRegistry ----------------------------------------------------------------------

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None:
        """Remember that the bot's message `thread_ts` in `channel` is about `entry_id` (first wins)."""
        values = {"channel": channel, "thread_ts": thread_ts, "entry_id": entry_id, "created_at": utc_now()}
        with self.engine.begin() as conn:
            conn.execute(insert_ignore(conn, bot_threads).values(**values))

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
        """`chatbot.slack.ledger`'s ledger across processes: True for the first caller of `key`.
        With `within`, also when the key was last marked longer ago than that (one share per
        place and minute); a compare-and-set, so one of two racing callers wins."""
        with self.engine.begin() as conn:
            marked = conn.execute(self._mark_statement, {"key": fitted_key(key), "handled_at": utc_now()})
            if marked.first() is not None:
                return True
        if within is None:
            return False
        now = utc_now()
        stale = (handled_events.c.key == fitted_key(key), handled_events.c.handled_at < now - within)
        with self.engine.begin() as conn:
            return claims.changed_one(conn, update(handled_events).where(*stale).values(handled_at=now))

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


def _daily_post(conn: Connection, channel: str, day: dt.date) -> DailyPost | None:
    row = conn.execute(
        select(daily_posts).where(daily_posts.c.channel == channel, daily_posts.c.day == day)
    ).one_or_none()
    return DailyPost(**row._mapping) if row is not None else None


# handled_events.key is a String(200); keys come from what Slack sends (trigger, action, unfurl
# ids), and PostgreSQL refused a longer one (the request went unanswered). A longer key is kept as
# its head and a SHA-256 of the whole: the same key always maps to the same row.
KEY_WIDTH = 200


def fitted_key(key: str) -> str:
    """`key`, or when it is longer than the column: its head, `#`, and the SHA-256 of all of it."""
    if len(key) <= KEY_WIDTH:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[: KEY_WIDTH - len(digest) - 1]}#{digest}"
