"""GitHub's facts about the digest's PRs, kept in the store: every replica reads them, one refreshes.

Rows are GitHub's answers as JSON sections with their ETags (`chatbot.github` makes them and reads
them back as `PrFacts`); the refresh of a slot (a GITHUB_REFRESH period, a batch of new entries)
is claimed by primary key, so of several replicas exactly one talks to GitHub.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, literal, select

from chatbot.store.engine import dialect_insert
from chatbot.store.schema import github_refreshes, github_waits, pr_facts


@dataclass(frozen=True)
class StoredFacts:
    """One PR's row: its sections as fetched, their ETags, when last fetched (200) and checked."""

    repo: str
    pr: int
    sections: dict[str, Any]
    etags: dict[str, str]
    fetched_at: dt.datetime
    checked_at: dt.datetime


def _utc(value: dt.datetime) -> dt.datetime:
    """SQLite gives naive datetimes back; everything written here is UTC."""
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


class PrFactsStore:
    """Reads and writes `pr_facts`; claims refresh slots in `github_refreshes`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def all(self) -> dict[tuple[str, int], StoredFacts]:
        """Every PR's stored facts by (repo, PR number)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(pr_facts)).mappings().all()
        return {
            (row["repo"], row["pr"]): StoredFacts(
                row["repo"],
                row["pr"],
                json.loads(row["facts"]),
                json.loads(row["etags"]),
                _utc(row["fetched_at"]),
                _utc(row["checked_at"]),
            )
            for row in rows
        }

    def save(self, facts: StoredFacts) -> None:
        """Insert or replace one PR's row."""
        values = {
            "facts": json.dumps(facts.sections, ensure_ascii=False, sort_keys=True),
            "etags": json.dumps(facts.etags, sort_keys=True),
            "fetched_at": facts.fetched_at,
            "checked_at": facts.checked_at,
        }
        statement = (
            dialect_insert(self.engine, pr_facts)
            .values(repo=facts.repo, pr=facts.pr, **values)
            .on_conflict_do_update(index_elements=["repo", "pr"], set_=values)
        )
        with self.engine.begin() as conn:
            conn.execute(statement)

    def claim_refresh(self, slot: str, owner: str, now: dt.datetime) -> bool:
        """True for exactly one caller per slot, across replicas."""
        statement = (
            dialect_insert(self.engine, github_refreshes)
            .values(slot=slot, state="claimed", owner=owner, claimed_at=now)
            .on_conflict_do_nothing()
            .returning(literal(1))
        )
        with self.engine.begin() as conn:
            return conn.execute(statement).first() is not None

    def wait_until(self, api_url: str) -> dt.datetime | None:
        """Until when GitHub asked that nothing be sent to `api_url`; None when it did not."""
        with self.engine.connect() as conn:
            until = conn.execute(select(github_waits.c.until).filter_by(api_url=api_url)).scalar()
        return _utc(until) if until is not None else None

    def save_wait(self, api_url: str, until: dt.datetime) -> None:
        statement = (
            dialect_insert(self.engine, github_waits)
            .values(api_url=api_url, until=until)
            .on_conflict_do_update(index_elements=["api_url"], set_={"until": until})
        )
        with self.engine.begin() as conn:
            conn.execute(statement)
