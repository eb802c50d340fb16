"""Taking over a stale claim: one compare-and-set shared by the daily post and the announcements.

A claim row names its owner; a process that finds it stale takes it only if the owner it read is
still the owner, so of two processes that both saw the same stale claim exactly one wins.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Table, update
from sqlalchemy.engine import Connection

CLAIMED = "claimed"


def take_over(
    conn: Connection, table: Table, key: dict[str, Any], stale_owner: str, owner: str, now: dt.datetime
) -> bool:
    """True when this caller took the claim from `stale_owner` (nobody else did first)."""
    taken = conn.execute(
        update(table)
        .where(
            *(table.c[name] == value for name, value in key.items()),
            table.c.state == CLAIMED,
            table.c.owner == stale_owner,
        )
        .values(owner=owner, claimed_at=now)
    ).rowcount
    return bool(taken == 1)
