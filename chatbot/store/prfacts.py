"""GitHub's facts about the digest's PRs, kept in the store: every replica reads them, one refreshes.

Rows are GitHub's answers as JSON sections with their ETags (`chatbot.github` makes them and reads
them back as `PrFacts`); the refresh of a slot (a GITHUB_REFRESH period, a batch of new entries)
is a claim row, so of several replicas exactly one talks to GitHub.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, select

from chatbot.store import claims
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


class PrFactsStore:
    """Reads and writes `pr_facts`; claims refresh slots in `github_refreshes`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def all(self) -> dict[tuple[str, int], StoredFacts]:
        """Every PR's stored facts by (repo, PR number)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(pr_facts)).all()
        return {
            (repo, pr): StoredFacts(repo, pr, json.loads(facts), json.loads(etags), fetched, checked)
            for repo, pr, facts, etags, fetched, checked in rows
        }

    def save(self, facts: StoredFacts) -> None:
        """Insert or replace one PR's row."""
        values = {
            "facts": json.dumps(facts.sections, ensure_ascii=False, sort_keys=True),
            "etags": json.dumps(facts.etags, sort_keys=True),
            "fetched_at": facts.fetched_at,
            "checked_at": facts.checked_at,
        }
        self._upsert(pr_facts, {"repo": facts.repo, "pr": facts.pr}, values)

    def claim_refresh(self, slot: str, owner: str, now: dt.datetime) -> bool:
        """True for exactly one caller per slot, across replicas."""
        with self.engine.begin() as conn:
            return claims.claim(conn, github_refreshes, {"slot": slot}, owner, now)

    def wait_until(self, api_url: str) -> dt.datetime | None:
        """Until when GitHub asked that nothing be sent to `api_url`; None when it did not."""
        with self.engine.connect() as conn:
            until: dt.datetime | None = conn.execute(
                select(github_waits.c.until).filter_by(api_url=api_url)
            ).scalar()
        return until

    def save_wait(self, api_url: str, until: dt.datetime) -> None:
        self._upsert(github_waits, {"api_url": api_url}, {"until": until})

    def _upsert(self, table: Any, key: dict[str, Any], values: dict[str, Any]) -> None:
        statement = dialect_insert(self.engine, table).values(**key, **values)
        with self.engine.begin() as conn:
            conn.execute(statement.on_conflict_do_update(index_elements=list(key), set_=values))
