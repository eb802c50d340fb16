"""The usage store: one short transaction per write on the bot's database (SQLite or PostgreSQL).

A vote is an upsert on (kind, target, entry, voter): the primary key makes a second click by
the same person change the row, never add one, also when two replicas take the two clicks.
The weekly curator report is claimed like the daily post: an insert-ignore on (week, channel)
lets exactly one replica post.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Engine, Table, delete, select, update

from chatbot.store import claims
from chatbot.store.engine import dialect_insert
from chatbot.usage.tables import (
    QUESTION_LENGTH,
    curator_reports,
    usage_answers,
    usage_entry_events,
    usage_feedback,
    usage_searches,
)

Vote = Literal[1, -1]
VoteOutcome = Literal["new", "changed", "same"]
Row = tuple[Table, dict[str, Any]]


@dataclass(frozen=True)
class FeedbackTarget:
    """What a 👍/👎 rates: a search result (entry under a normalised query) or a follow-up answer
    (entry, the question's channel:ts, its intent)."""

    kind: Literal["search", "answer"]
    target: str
    entry_id: str
    intent: str | None = None


class UsageStore:
    """Writes and prunes usage rows; `chatbot.usage.report` reads them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # -- what happened -------------------------------------------------------------------------

    def insert(self, rows: Sequence[Row]) -> None:
        """Insert rows of several tables in one transaction (the recorder's batches)."""
        by_table: dict[Table, list[dict[str, Any]]] = {}
        for table, values in rows:
            by_table.setdefault(table, []).append(values)
        if not by_table:
            return
        with self.engine.begin() as conn:
            for table, values_list in by_table.items():
                conn.execute(table.insert(), values_list)

    # -- feedback ------------------------------------------------------------------------------

    def vote(
        self, target: FeedbackTarget, voter: str, vote: Vote, at: dt.datetime, place: str | None = None
    ) -> VoteOutcome:
        """Store one person's vote on a target: a first vote, a changed one, or the same again."""
        key = _feedback_key(target, voter)
        values = {"vote": vote, "intent": target.intent, "at": at, "place": place}
        statement = dialect_insert(self.engine, usage_feedback).values(**key, **values)
        statement = statement.on_conflict_do_update(index_elements=list(key), set_={"vote": vote, "at": at})
        with self.engine.begin() as conn:
            before = conn.execute(select(usage_feedback.c.vote).filter_by(**key)).scalar_one_or_none()
            conn.execute(statement)
        if before is None:
            return "new"
        return "same" if before == vote else "changed"

    def note_missing(self, target: FeedbackTarget, voter: str, text: str) -> bool:
        """Attach the 👎 modal's answer to that person's vote; False when there is no such vote."""
        statement = update(usage_feedback).filter_by(**_feedback_key(target, voter))
        with self.engine.begin() as conn:
            return claims.changed_one(conn, statement.values(missing=text[:2000] or None))

    # -- retention -----------------------------------------------------------------------------

    def prune(self, older_than: dt.datetime) -> int:
        """Delete usage rows from before `older_than` (USAGE_RETENTION); how many went."""
        times = [t.c.at for t in (usage_searches, usage_entry_events, usage_answers, usage_feedback)]
        with self.engine.begin() as conn:
            deletes = [delete(c.table).where(c < older_than) for c in [*times, curator_reports.c.claimed_at]]
            return sum(int(conn.execute(statement).rowcount) for statement in deletes)

    # -- the weekly curator report ---------------------------------------------------------------

    def claim_report(self, week: str, channel: str, owner: str, now: dt.datetime) -> bool:
        """True for exactly one caller per (week, channel), across replicas."""
        with self.engine.begin() as conn:
            return claims.claim(conn, curator_reports, {"week": week, "channel": channel}, owner, now)

    def record_report(self, week: str, channel: str, owner: str, message_ts: str) -> None:
        mine = claims.held(curator_reports, {"week": week, "channel": channel}, owner)
        with self.engine.begin() as conn:
            conn.execute(update(curator_reports).where(*mine).values(state="posted", message_ts=message_ts))

    def release_report(self, week: str, channel: str, owner: str) -> None:
        """Slack refused the post: drop the claim so a later run (any replica) tries again."""
        with self.engine.begin() as conn:
            claims.release(conn, curator_reports, {"week": week, "channel": channel}, owner)


def _feedback_key(target: FeedbackTarget, voter: str) -> dict[str, str]:
    return {"kind": target.kind, "target": target.target, "entry_id": target.entry_id, "voter": voter}


# -- rows -----------------------------------------------------------------------------------------


def search_rows(
    at: dt.datetime, source: str, query: str, results: int, shown: Sequence[str], place: str | None = None
) -> list[Row]:
    """A search (normalised query, how many entries matched, where it was made) and the entries
    it showed."""
    search = {"at": at, "source": source, "query": query, "results": results, "place": place}
    rows: list[Row] = [(usage_searches, search)]
    rows += [entry_event_row(at, entry_id, "shown") for entry_id in shown]
    return rows


def entry_event_row(at: dt.datetime, entry_id: str, kind: str) -> Row:
    return (usage_entry_events, {"at": at, "entry_id": entry_id, "kind": kind})


def answer_row(
    at: dt.datetime, entry_id: str, intent: str, found: bool, question: str | None, place: str | None = None
) -> Row:
    """A follow-up answer; the (normalised) question only when the note did not have it."""
    kept = None if found else (question or "")[:QUESTION_LENGTH]
    values = {"at": at, "entry_id": entry_id, "intent": intent, "found": found, "question": kept}
    return (usage_answers, {**values, "place": place})
