"""Work held while the database is away (PostgreSQL restarting, SQLite on a full disk): retried in
order with backoff until it goes through, or the person waiting told once. Slack does not send an
acknowledged event again, so work dropped here would be lost.

What waits longer than `max_age`, does not fit (`capacity`) or is still held at shutdown is given
up: its `give_up` tells the person, one ERROR line says what. Writes nobody waits on (a thread's
registration, the daily post's record) are held the same way with a longer age. Each attempt
marks the message handled before answering, so nothing is posted twice, also across replicas.
The queue lives in the process: a crash loses what it holds.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import DisconnectionError, InterfaceError, InternalError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from chatbot.store.engine import short as short  # daily.poster imports it from here
from chatbot.store.threads import ThreadRegistry

log = logging.getLogger(__name__)

# What a store call raises when the database is away, full, read-only or its file gone: worth
# waiting for. Not a bug's error (ProgrammingError, IntegrityError), nor Slack's (an OSError).
STORE_FAILURES: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    InternalError,
    DisconnectionError,
    PoolTimeout,
    sqlite3.OperationalError,
)

CAPACITY = 500
MAX_AGE = 600.0  # seconds a person's question is held before they are told
WRITE_MAX_AGE = 3600.0  # seconds a write nobody waits on is held
FIRST_DELAY = 0.5
MAX_DELAY = 5.0


@dataclass
class Held:
    """One piece of held work: `attempt` raises a store failure while the database is away;
    `give_up(reason)` tells whoever waits that it will not happen."""

    key: str
    what: str
    attempt: Callable[[], object]
    give_up: Callable[[str], None]
    held_at: float
    max_age: float


class OutageQueue:
    """Held work, retried in order on one worker thread with backoff (see the module docstring)."""

    def __init__(
        self,
        *,
        capacity: int = CAPACITY,
        max_age: float = MAX_AGE,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.max_age = max_age
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.clock = clock
        self._held: OrderedDict[str, Held] = OrderedDict()
        self._changed = threading.Condition()
        self._closed = threading.Event()
        self._worker: threading.Thread | None = None
        self._failing: str | None = None  # the database's last failure while work is held

    def hold(
        self,
        key: str,
        what: str,
        attempt: Callable[[], object],
        give_up: Callable[[str], None],
        *,
        error: BaseException | None = None,
        max_age: float | None = None,
    ) -> bool:
        """Hold `attempt` until it goes through; False when it could not be held (full, closing:
        given up at once) or is held already (the same message delivered twice)."""
        with self._changed:
            if key in self._held:
                log.info("%s: already held", what)
                return False
            refused = "the bot is shutting down" if self._closed.is_set() else None
            if refused is None and len(self._held) >= self.capacity:
                refused = f"{self.capacity} pieces of work already wait for the database"
            if refused is None:
                item = Held(key, what, attempt, give_up, self.clock(), max_age or self.max_age)
                self._held[key] = item
                first = len(self._held) == 1
                self._start()
                self._changed.notify_all()
        if refused is not None:
            self._give_up(Held(key, what, attempt, give_up, self.clock(), 0.0), refused)
            return False
        why = f" ({short(error)})" if error is not None else ""
        log.log(
            logging.WARNING if first else logging.INFO,
            "database unavailable%s: holding %s until it is back (at most %g s)",
            why,
            what,
            item.max_age,
        )
        return True

    def pending(self) -> int:
        with self._changed:
            return len(self._held)

    def wait_held(self, count: int, timeout: float) -> bool:
        """Until at least `count` pieces of work are held (tests)."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self._held) >= count, timeout)

    def wait_empty(self, timeout: float) -> bool:
        """Until nothing is held (tests, the drain at shutdown)."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._held, timeout)

    def status(self) -> str:
        """ "ok", or how much waits for the database and why (readiness)."""
        with self._changed:
            if not self._held:
                return "ok"
            return f"{len(self._held)} held until the database is back: {self._failing or 'retrying'}"

    def close(self, drain: float = 0.0) -> None:
        """Stop retrying; what is still held after `drain` seconds is given up (told once)."""
        if drain > 0:
            self.wait_empty(drain)
        self._closed.set()
        with self._changed:
            left = list(self._held.values())
            self._held.clear()
            self._changed.notify_all()
        for item in left:
            self._give_up(item, "the bot is shutting down")

    def _start(self) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._run, name="outage-retry", daemon=True)
            self._worker.start()

    def _run(self) -> None:
        delay = self.first_delay
        while not self._closed.is_set():
            with self._changed:
                self._changed.wait_for(lambda: bool(self._held) or self._closed.is_set())
                batch = list(self._held.values())
            if self._closed.is_set():
                return
            if self._retry(batch):
                delay = self.first_delay
                continue
            self._closed.wait(delay)  # backoff: woken early only by close
            delay = min(delay * 2, self.max_delay)

    def _retry(self, batch: list[Held]) -> bool:
        """Give up what is too old, then attempt the rest in order; False at the first database
        failure (it is still away: the rest waits for the next pass)."""
        now = self.clock()
        for item in batch:
            if now - item.held_at > item.max_age and self._drop(item):
                self._give_up(item, f"the database was unavailable for over {item.max_age:g} s")
        for item in batch:
            if not self._is_held(item):
                continue
            try:
                item.attempt()
            except STORE_FAILURES as exc:
                with self._changed:
                    self._failing = short(exc)
                return False
            except Exception as exc:  # the work's own failure: it handled what it could
                log.exception("%s failed after the database came back: %s", item.what, exc)
            if self._drop(item):
                log.info("%s went through after %.1f s", item.what, self.clock() - item.held_at)
        with self._changed:
            self._failing = None
        return True

    def _is_held(self, item: Held) -> bool:
        with self._changed:
            return self._held.get(item.key) is item

    def _drop(self, item: Held) -> bool:
        with self._changed:
            if self._held.get(item.key) is not item:
                return False
            del self._held[item.key]
            self._changed.notify_all()
            return True

    @staticmethod
    def _give_up(item: Held, reason: str) -> None:
        log.error("gave up %s: %s", item.what, reason)
        try:
            item.give_up(reason)
        except Exception as exc:  # telling failed too (Slack away): the ERROR line above stays
            log.error("could not tell about %s: %s: %s", item.what, type(exc).__name__, exc)


def attempt_or_hold(
    queue: OutageQueue | None,
    key: str,
    what: str,
    attempt: Callable[[], object],
    give_up: Callable[[str], None],
    *,
    max_age: float | None = None,
) -> None:
    """Run `attempt`; when the database fails it, hold it in `queue` (without a queue: raise)."""
    try:
        attempt()
    except STORE_FAILURES as exc:
        if queue is None:
            raise
        queue.hold(key, what, attempt, give_up, error=exc, max_age=max_age)


class RememberedThreads:
    """A ThreadRegistry in memory in front of the store: a known thread is routed without the
    database, and a registration it cannot take now (the post is in Slack) is held in the queue."""

    def __init__(self, inner: ThreadRegistry, queue: OutageQueue | None, capacity: int = 20_000) -> None:
        self.inner = inner
        self.queue = queue
        self.capacity = capacity
        self._known: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None:
        self._remember(channel, thread_ts, entry_id)
        attempt_or_hold(
            self.queue,
            f"thread:{channel}:{thread_ts}",
            f"the registration of thread {channel} {thread_ts} (entry {entry_id})",
            lambda: self.inner.register(channel, thread_ts, entry_id),
            lambda _reason: None,  # this process still knows it; the ERROR line says the rest
            max_age=WRITE_MAX_AGE,
        )

    def entry_for(self, channel: str, thread_ts: str) -> str | None:
        known = self.known(channel, thread_ts)
        if known is not None:
            return known
        found = self.inner.entry_for(channel, thread_ts)
        if found is not None:
            self._remember(channel, thread_ts, found)
        return found

    def known(self, channel: str, thread_ts: str) -> str | None:
        """The entry of a thread this process registered or looked up (no database)."""
        with self._lock:
            return self._known.get((channel, thread_ts))

    def _remember(self, channel: str, thread_ts: str, entry_id: str) -> None:
        with self._lock:
            self._known[(channel, thread_ts)] = entry_id
            self._known.move_to_end((channel, thread_ts))
            while len(self._known) > self.capacity:
                self._known.popitem(last=False)
