"""Claim rows (daily posts, announcements, curator reports, GitHub refresh slots): the primary key
lets exactly one process claim; a stale claim is taken over by a compare-and-set on its owner, so
of two processes that saw the same stale claim one wins."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import ColumnElement, Delete, Table, Update, delete, update
from sqlalchemy.engine import Connection

from chatbot.store.engine import insert_ignore, inserted

CLAIMED = "claimed"
POSTED = "posted"
Key = dict[str, Any]


def held(table: Table, key: Key, owner: str, *more: ColumnElement[bool]) -> list[ColumnElement[bool]]:
    """The conditions of `owner`'s row of `key`, and `more`."""
    return [*(table.c[name] == value for name, value in key.items()), table.c.owner == owner, *more]


def claim(conn: Connection, table: Table, key: Key, owner: str, now: dt.datetime, **values: Any) -> bool:
    """True when this caller inserted the claim (nobody held the key)."""
    row = {**key, **values, "state": CLAIMED, "owner": owner, "claimed_at": now}
    return inserted(conn, insert_ignore(conn, table).values(**row))


def take_over(
    conn: Connection, table: Table, key: Key, stale_owner: str, owner: str, now: dt.datetime
) -> bool:
    """True when this caller took the claim from `stale_owner` (nobody else did first)."""
    unposted = held(table, key, stale_owner, table.c.state == CLAIMED)
    return changed_one(conn, update(table).where(*unposted).values(owner=owner, claimed_at=now))


def mark_unknown(conn: Connection, table: Table, key: Key, owner: str, prefix: str) -> bool:
    """Keep this owner's claim but rename it (`prefix` + owner): its post got no answer, so the
    next run takes it over and looks in Slack before posting."""
    unposted = held(table, key, owner, table.c.state == CLAIMED)
    return changed_one(conn, update(table).where(*unposted).values(owner=(prefix + owner)[:200]))


def release(conn: Connection, table: Table, key: Key, owner: str) -> bool:
    """Drop this owner's unposted claim (Slack refused the post), so a later run tries again."""
    return changed_one(conn, delete(table).where(*held(table, key, owner, table.c.state == CLAIMED)))


def changed_one(conn: Connection, statement: Update | Delete) -> bool:
    return bool(conn.execute(statement).rowcount == 1)
