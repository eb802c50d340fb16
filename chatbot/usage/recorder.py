"""The usage recorder: one call per thing that happened, counted in the metrics and kept in the store.

Counters move at once; rows are queued and a one-thread writer inserts what is queued in one
transaction (normalising the text there), so neither a database write nor the text work sits on
Slack's 3-second path. Without a store (the console) only metrics count. Rows older than the
retention are pruned at most once an hour, by whichever write comes next.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, TypeVar

from chatbot.observability.metrics import Metrics
from chatbot.store.engine import short, store_errors
from chatbot.store.sql import utc_now
from chatbot.usage.places import Place, Places, asked_in
from chatbot.usage.privacy import normalise, voter_hash
from chatbot.usage.store import (
    FeedbackTarget,
    Row,
    UsageStore,
    Vote,
    VoteOutcome,
    answer_row,
    entry_event_row,
    search_rows,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_RETENTION = dt.timedelta(days=90)
PRUNE_EVERY = 3600.0


@dataclass(eq=False)
class UsageRecorder:
    """Metrics + usage rows for one bot; see the module docstring."""

    metrics: Metrics
    store: UsageStore | None = None
    _: KW_ONLY
    writer: Executor | None = None
    voter_key: bytes = b""
    retention: dt.timedelta = DEFAULT_RETENTION
    clock: Callable[[], dt.datetime] = utc_now
    monotonic: Callable[[], float] = time.monotonic
    # Where the current request was made, as stored with its rows (resolved on the writer).
    places: Callable[[tuple[str, str] | None], Place] = field(default_factory=lambda: Places(None))
    _pruned_at: float = field(default=-math.inf, init=False, repr=False)
    _prune_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _queue: list[Callable[[], list[Row]]] = field(default_factory=list, init=False, repr=False)
    _queue_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _flush_due: bool = field(default=False, init=False, repr=False)

    # -- counted and kept ------------------------------------------------------------------------

    def command(self, kind: str) -> None:
        self.metrics.commands_by_kind(kind).inc()

    def search_latency(self, seconds: float) -> None:
        self.metrics.search_seconds.observe(seconds)

    def search(self, source: str, query: str, results: int, shown: Sequence[str]) -> None:
        """A first-page search by a person: with or without results, what it showed."""
        self.metrics.searches_by(source, "results" if results else "no_results").inc()
        at, shown, asked = self.clock(), list(shown), asked_in.get()
        self._write(lambda: search_rows(at, source, normalise(query), results, shown, self.places(asked)))

    def answer(self, entry_id: str, intent: str, found: bool, question: str, seconds: float) -> None:
        self.metrics.answer_seconds.observe(seconds)
        self.metrics.answers.labels(intent, "found" if found else "not_in_note").inc()
        at, asked = self.clock(), asked_in.get()
        kept = None if found else question
        self._write(
            lambda: [
                answer_row(at, entry_id, intent, found, kept and normalise(kept, 300), self.places(asked))
            ]
        )

    def shared(self, entry_id: str) -> None:
        self._entry_event(entry_id, "shared")

    def posted(self, entry_id: str) -> None:
        """The PR of the day went out with this entry (a view for the whole channel)."""
        self._entry_event(entry_id, "posted")

    def daily(self, status: str) -> None:
        self.metrics.daily_posts.labels(status).inc()

    def deduplicated(self, by: Literal["message"]) -> None:
        self.metrics.events_deduplicated.labels(by).inc()

    def vote(self, target: FeedbackTarget, user_id: str, vote: Vote) -> VoteOutcome | None:
        """One person's 👍/👎, stored at once (the press's answer depends on it)."""
        outcome: VoteOutcome | None = None
        if self.store is not None:
            place = self.places(asked_in.get())
            outcome = self.store.vote(target, self.voter(user_id), vote, self.clock(), place)
        self.metrics.feedback.labels(target.kind, "up" if vote > 0 else "down", outcome or "new").inc()
        self.prune_if_due()
        return outcome

    def missing(self, target: FeedbackTarget, user_id: str, text: str) -> bool:
        """The 👎 modal's "what was missing?", redacted, on that person's vote."""
        if self.store is None or not text.strip():
            return False
        from chatbot.observability.logs import redact

        return self.store.note_missing(target, self.voter(user_id), redact(text.strip()))

    def voter(self, user_id: str) -> str:
        return voter_hash(self.voter_key, user_id)

    # -- retention -------------------------------------------------------------------------------

    def prune_if_due(self) -> int:
        """Drop rows older than the retention, at most every PRUNE_EVERY seconds."""
        if self.store is None:
            return 0
        now = self.monotonic()
        with self._prune_lock:
            if now - self._pruned_at < PRUNE_EVERY:
                return 0
            self._pruned_at = now
        store = self.store
        removed = _best_effort("pruning usage rows", lambda: store.prune(self.clock() - self.retention)) or 0
        if removed:
            log.info("pruned %d usage rows older than %s", removed, self.retention)
        return removed

    # -- helpers ---------------------------------------------------------------------------------

    def _entry_event(self, entry_id: str, kind: str) -> None:
        at = self.clock()
        self._write(lambda: [entry_event_row(at, entry_id, kind)])

    def _write(self, rows: Callable[[], list[Row]]) -> None:
        """Queue rows (made on the writer); start a flush unless one is already due."""
        if self.store is None:
            return
        with self._queue_lock:
            self._queue.append(rows)
            if self._flush_due:
                return
            self._flush_due = True
        if self.writer is None:
            self._flush()
        else:
            self.writer.submit(self._flush)

    def _flush(self) -> None:
        with self._queue_lock:
            batch, self._queue = self._queue, []
            self._flush_due = False
        if self.store is None or not batch:
            return
        store = self.store

        def write() -> None:
            store.insert([row for make in batch for row in make()])
            self.prune_if_due()

        _best_effort(f"recording {len(batch)} usage rows", write)


def _best_effort(what: str, work: Callable[[], T]) -> T | None:
    """Usage never fails an answer: a database outage is one line per batch, anything else a traceback."""
    try:
        return work()
    except store_errors() as exc:
        log.error("%s failed (%s): %s", what, type(exc).__name__, short(exc))
    except Exception:
        log.exception("%s failed", what)
    return None
