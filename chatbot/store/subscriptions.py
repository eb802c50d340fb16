"""Subscriptions, the entries seen in the digest folder, and announcement claims, in SQL.

Beside `SqlStore` on the same engine (same database, same migrations). Every replica reads the
subscriptions at least once a minute to reconcile its scheduler, so a change made through any
replica reaches all of them without a restart. New digest entries are recognised in one locked
transaction (so two replicas never split one new file into two batches), and each (channel, batch)
announcement is claimed by a primary key, like the daily post.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import ColumnElement, Engine, delete, func, literal, select, text, update
from sqlalchemy.engine import Connection

from chatbot.daily.subscription import Schedule, Subscription, Topic
from chatbot.store.claims import take_over
from chatbot.store.engine import dialect_insert
from chatbot.store.schema import announcements, digest_entries, subscriptions

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

BASELINE = "baseline"
CLAIMED = "claimed"
POSTED = "posted"
# Slack refused the announcement for good (the bot left the channel, the channel archived, a
# message Slack will not take): not tried again, not posted either.
REFUSED = "refused"
# Any constant: "vllm-digest new entries" among PostgreSQL advisory locks.
ENTRIES_LOCK_KEY = 0x76646E65


@dataclass(frozen=True)
class Batch:
    """Entries that appeared in the digest folder together."""

    batch: str
    seen_at: dt.datetime
    entry_ids: tuple[str, ...]


@dataclass(frozen=True)
class Announcement:
    channel: str
    batch: str
    state: str
    owner: str
    claimed_at: dt.datetime

    @property
    def posted(self) -> bool:
        return self.state == POSTED


def _utc(value: dt.datetime) -> dt.datetime:
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


class SubscriptionStore:
    """Subscriptions by channel, seen entries by batch, announcements by (channel, batch)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- subscriptions -----------------------------------------------------------------------

    def put(self, subscription: Subscription, *, now: dt.datetime) -> None:
        """Create or replace the channel's subscription."""
        s = subscription
        values = {
            "topics": json.dumps([t.to_json() for t in s.topics], ensure_ascii=False),
            "hour": s.schedule.hour,
            "minute": s.schedule.minute,
            "days": ",".join(str(d) for d in sorted(s.schedule.days)),
            "timezone": s.schedule.zone,
            "strict": s.strict,
            "announce": s.announce,
            "updated_by": s.updated_by,
            "updated_at": now,
        }
        with self.engine.begin() as conn:
            changed = conn.execute(
                update(subscriptions).where(subscriptions.c.channel == s.channel).values(**values)
            ).rowcount
            if not changed:
                conn.execute(self._insert_ignore(subscriptions).values(channel=s.channel, **values))
                conn.execute(
                    update(subscriptions).where(subscriptions.c.channel == s.channel).values(**values)
                )

    def get(self, channel: str) -> Subscription | None:
        with self.engine.begin() as conn:
            row = conn.execute(select(subscriptions).where(subscriptions.c.channel == channel)).one_or_none()
        return _subscription(row) if row is not None else None

    def all(self) -> list[Subscription]:
        with self.engine.begin() as conn:
            rows = conn.execute(select(subscriptions).order_by(subscriptions.c.channel)).all()
        return [_subscription(row) for row in rows]

    def remove(self, channel: str) -> bool:
        with self.engine.begin() as conn:
            return bool(
                conn.execute(delete(subscriptions).where(subscriptions.c.channel == channel)).rowcount
            )

    # -- new entries -------------------------------------------------------------------------

    def note_entries(self, entry_ids: Iterable[str], *, now: dt.datetime) -> Batch | None:
        """Record the ids in the digest folder; the ids not seen before as one new batch (None
        when there are none).

        The first call on an empty table records the `BASELINE` batch (what the bot started with is not
        news). One transaction under a lock, so concurrent replicas agree on the batches.
        """
        ids = set(entry_ids)
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": ENTRIES_LOCK_KEY})
            known_count = conn.execute(select(func.count()).select_from(digest_entries)).scalar_one()
            known = set(conn.execute(select(digest_entries.c.entry_id)).scalars()) if known_count else set()
            new = sorted(ids - known)
            if not new:
                return None
            batch = BASELINE if not known_count else f"{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
            conn.execute(
                self._insert_ignore(digest_entries),
                [{"entry_id": i, "batch": batch, "seen_at": now} for i in new],
            )
        return Batch(batch, now, tuple(new))

    def batches_since(self, since: dt.datetime) -> list[Batch]:
        """Announceable batches (not the baseline) seen at or after `since`, oldest first."""
        query = (
            select(digest_entries.c.batch, digest_entries.c.seen_at, digest_entries.c.entry_id)
            .where(digest_entries.c.batch != BASELINE, digest_entries.c.seen_at >= since)
            .order_by(digest_entries.c.seen_at, digest_entries.c.batch, digest_entries.c.entry_id)
        )
        found: dict[str, tuple[dt.datetime, list[str]]] = {}
        with self.engine.begin() as conn:
            for row in conn.execute(query):
                found.setdefault(row.batch, (_utc(row.seen_at), []))[1].append(row.entry_id)
        return [Batch(b, seen, tuple(ids)) for b, (seen, ids) in found.items()]

    # -- announcement claims -----------------------------------------------------------------

    def claim_announcement(
        self,
        channel: str,
        batch: str,
        owner: str,
        *,
        now: dt.datetime,
        is_stale: Callable[[Announcement], bool],
    ) -> str | None:
        """ "claimed" (new) or "taken over" (a stale claim) when this owner may post; else None."""
        with self.engine.begin() as conn:
            inserted = (
                conn.execute(
                    self._insert_ignore(announcements)
                    .values(channel=channel, batch=batch, state=CLAIMED, owner=owner, claimed_at=now)
                    .returning(literal(1))
                ).first()
                is not None
            )
            current = self._announcement(conn, channel, batch)
        if inserted:
            return "claimed"
        if current is None or current.posted or not is_stale(current):
            return None
        with self.engine.begin() as conn:
            taken = take_over(
                conn, announcements, {"channel": channel, "batch": batch}, current.owner, owner, now
            )
        return "taken over" if taken else None

    def finish_announcement(self, channel: str, batch: str, owner: str, message_ts: str | None) -> None:
        """Posted (with its ts), or released (None) so a later run tries again."""
        where = _owned(channel, batch, owner)
        with self.engine.begin() as conn:
            if message_ts is None:
                conn.execute(delete(announcements).where(*where, announcements.c.state == CLAIMED))
            else:
                conn.execute(update(announcements).where(*where).values(state=POSTED, message_ts=message_ts))

    def mark_announcement_unknown(self, channel: str, batch: str, owner: str, prefix: str) -> bool:
        """Keep this owner's claim but mark it (`prefix` + owner): its post got no answer, so the
        next run takes it over and looks in Slack before posting."""
        held = (*_owned(channel, batch, owner), announcements.c.state == CLAIMED)
        with self.engine.begin() as conn:
            changed = conn.execute(update(announcements).where(*held).values(owner=(prefix + owner)[:200]))
            return bool(changed.rowcount == 1)

    def refuse_announcement(self, channel: str, batch: str, owner: str) -> bool:
        """This owner's claim given up: Slack refused the post for good, so no run tries again."""
        held = (*_owned(channel, batch, owner), announcements.c.state == CLAIMED)
        with self.engine.begin() as conn:
            changed = conn.execute(update(announcements).where(*held).values(state=REFUSED))
            return bool(changed.rowcount == 1)

    def announced(self, channel: str, *, refused: bool = False) -> set[str]:
        """Batches already posted to the channel (and, with `refused`, those Slack refused for good)."""
        states = (POSTED, REFUSED) if refused else (POSTED,)
        query = select(announcements.c.batch).where(
            announcements.c.channel == channel, announcements.c.state.in_(states)
        )
        with self.engine.begin() as conn:
            return set(conn.execute(query).scalars())

    # -- helpers -----------------------------------------------------------------------------

    def _insert_ignore(self, table: object) -> postgresql.Insert | sqlite.Insert:
        return dialect_insert(self.engine, table).on_conflict_do_nothing()

    @staticmethod
    def _announcement(conn: Connection, channel: str, batch: str) -> Announcement | None:
        row = conn.execute(
            select(announcements).where(announcements.c.channel == channel, announcements.c.batch == batch)
        ).one_or_none()
        if row is None:
            return None
        return Announcement(row.channel, row.batch, row.state, row.owner, _utc(row.claimed_at))


def _subscription(row: object) -> Subscription:
    r = row  # a Row of `subscriptions`
    topics = tuple(Topic.from_json(t) for t in json.loads(r.topics))  # type: ignore[attr-defined]
    days = frozenset(int(d) for d in str(r.days).split(",") if d)  # type: ignore[attr-defined]
    return Subscription(
        channel=r.channel,  # type: ignore[attr-defined]
        schedule=Schedule(r.hour, r.minute, days, r.timezone),  # type: ignore[attr-defined]
        topics=topics,
        strict=bool(r.strict),  # type: ignore[attr-defined]
        announce=bool(r.announce),  # type: ignore[attr-defined]
        source="slack",
        updated_by=r.updated_by,  # type: ignore[attr-defined]
        updated_at=_utc(r.updated_at),  # type: ignore[attr-defined]
    )


def _owned(channel: str, batch: str, owner: str) -> tuple[ColumnElement[bool], ...]:
    """The announcement row of `batch` in `channel` that `owner` holds."""
    return (
        announcements.c.channel == channel,
        announcements.c.batch == batch,
        announcements.c.owner == owner,
    )
