"""Subscriptions, the entries seen in the digest folder, and announcement claims, in SQL.

Every replica re-reads the subscriptions at least once a minute, so a change made through any
replica reaches all of them. New entries are recognised in one locked transaction (two replicas
never split one new file into two batches); each (channel, batch) announcement is a claim row.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, delete, func, select, text, update

from chatbot.daily.subscription import Schedule, Subscription, Topic
from chatbot.store import claims
from chatbot.store.claims import CLAIMED, POSTED
from chatbot.store.engine import dialect_insert, insert_ignore
from chatbot.store.schema import announcements, digest_entries, subscriptions

BASELINE = "baseline"
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
        upsert = dialect_insert(self.engine, subscriptions).values(channel=s.channel, **values)
        with self.engine.begin() as conn:
            conn.execute(upsert.on_conflict_do_update(index_elements=["channel"], set_=values))

    def get(self, channel: str) -> Subscription | None:
        with self.engine.begin() as conn:
            row = conn.execute(select(subscriptions).where(subscriptions.c.channel == channel)).one_or_none()
        return _subscription(row._mapping) if row is not None else None

    def all(self) -> list[Subscription]:
        with self.engine.begin() as conn:
            rows = conn.execute(select(subscriptions).order_by(subscriptions.c.channel)).mappings().all()
        return [_subscription(row) for row in rows]

    def remove(self, channel: str) -> bool:
        with self.engine.begin() as conn:
            return bool(
                conn.execute(delete(subscriptions).where(subscriptions.c.channel == channel)).rowcount
            )

    # -- new entries -------------------------------------------------------------------------

    def note_entries(self, entry_ids: Iterable[str], *, now: dt.datetime) -> Batch | None:
        """Record the ids in the digest folder; those not seen before as one new batch (None when
        there are none). The first call on an empty table records the `BASELINE` batch (what the
        bot started with is not news). One transaction under a lock: replicas agree on batches."""
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
                insert_ignore(conn, digest_entries),
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
                found.setdefault(row.batch, (row.seen_at, []))[1].append(row.entry_id)
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
        key = {"channel": channel, "batch": batch}
        with self.engine.begin() as conn:
            if claims.claim(conn, announcements, key, owner, now):
                return "claimed"
            row = conn.execute(select(*_ANNOUNCEMENT).filter_by(**key)).one_or_none()
        current = Announcement(*row) if row is not None else None
        if current is None or current.posted or not is_stale(current):
            return None
        with self.engine.begin() as conn:
            taken = claims.take_over(conn, announcements, key, current.owner, owner, now)
        return "taken over" if taken else None

    def finish_announcement(self, channel: str, batch: str, owner: str, message_ts: str | None) -> None:
        """Posted (with its ts), or released (None) so a later run tries again."""
        key = {"channel": channel, "batch": batch}
        with self.engine.begin() as conn:
            if message_ts is None:
                claims.release(conn, announcements, key, owner)
            else:
                mine = claims.held(announcements, key, owner)
                conn.execute(update(announcements).where(*mine).values(state=POSTED, message_ts=message_ts))

    def mark_announcement_unknown(self, channel: str, batch: str, owner: str, prefix: str) -> bool:
        with self.engine.begin() as conn:
            key = {"channel": channel, "batch": batch}
            return claims.mark_unknown(conn, announcements, key, owner, prefix)

    def refuse_announcement(self, channel: str, batch: str, owner: str) -> bool:
        """This owner's claim given up: Slack refused the post for good, so no run tries again."""
        key = {"channel": channel, "batch": batch}
        unposted = claims.held(announcements, key, owner, announcements.c.state == CLAIMED)
        with self.engine.begin() as conn:
            return claims.changed_one(conn, update(announcements).where(*unposted).values(state=REFUSED))

    def announced(self, channel: str, *, refused: bool = False) -> set[str]:
        """Batches already posted to the channel (and, with `refused`, those Slack refused for good)."""
        states = (POSTED, REFUSED) if refused else (POSTED,)
        query = select(announcements.c.batch).where(
            announcements.c.channel == channel, announcements.c.state.in_(states)
        )
        with self.engine.begin() as conn:
            return set(conn.execute(query).scalars())


_ANNOUNCEMENT = [announcements.c[name] for name in ("channel", "batch", "state", "owner", "claimed_at")]


def _subscription(row: Any) -> Subscription:
    """A row of `subscriptions` (a mapping) as the core's Subscription."""
    days = frozenset(int(d) for d in str(row["days"]).split(",") if d)
    return Subscription(
        channel=row["channel"],
        schedule=Schedule(row["hour"], row["minute"], days, row["timezone"]),
        topics=tuple(Topic.from_json(t) for t in json.loads(row["topics"])),
        strict=bool(row["strict"]),
        announce=bool(row["announce"]),
        source="slack",
        updated_by=row["updated_by"],
        updated_at=row["updated_at"],
    )
