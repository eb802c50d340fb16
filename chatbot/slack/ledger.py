"""The one ledger of "seen this request/message": Slack's retries and replays acted on once.

A signed request can be replayed within Slack's 5-minute window, an event is retried when its
ack was late, a person can press a button twice. Every such check marks a key here (the store's
`handled_events` table when there is a store, so it holds across replicas and restarts):

- `message:<channel>:<ts>`: a message answered (follow-ups, DMs; `unfurl:` ts for previews);
- `cmd:<team>:<trigger_id>`: a slash command (Slack gives each invocation its own trigger id);
- `action:<team>:<trigger_id>:<action_ts>`: a button press;
- `share:<channel>:<thread>:<entry>`: one entry shared into one place, at most once a minute.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware

from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

SHARE_WINDOW = dt.timedelta(minutes=1)
# How long a mark is kept (the follow-up handler prunes older ones; Slack retries for minutes).
KEEP = dt.timedelta(days=1)
# Seconds the ack path waits for the database's ledger before answering anyway (Slack allows
# 3 s; a SQLite file another process locked made it wait the 30 s busy timeout).
LEDGER_DEADLINE = 0.5


class Ledger(Protocol):
    """Keys that were handled; `SqlStore` implements it across processes, `InMemoryLedger` in one."""

    def mark_handled(self, key: str, *, within: dt.timedelta | None = None) -> bool:
        """True for the first caller of `key` (with `within`: the first since `within` ago)."""
        ...

    def forget_handled(self, key: str) -> None:
        """Drop a key, so a later attempt is acted on (the work failed)."""
        ...

    def prune_handled_events(self, older_than: dt.datetime) -> int:
        """Forget marks older than a time; how many went."""
        ...


def message_key(channel: str, ts: str) -> str:
    """The mark of one message: every delivery of it (retries, `message` + `app_mention`) has it."""
    return f"message:{channel}:{ts}"


class InMemoryLedger:
    """The Ledger for one process (console, tests without a database); forgets after KEEP.

    Keys are kept in the order they were (last) marked, so forgetting is popping the oldest
    from the front: O(1) per mark, however many keys the last KEEP holds."""

    def __init__(self, clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)) -> None:
        self.clock = clock
        self._seen: OrderedDict[str, dt.datetime] = OrderedDict()
        self._lock = threading.Lock()

    def mark_handled(self, key: str, *, within: dt.timedelta | None = None) -> bool:
        now = self.clock()
        with self._lock:
            self._forget_older_than(now - KEEP)
            seen = self._seen.get(key)
            if seen is not None and (within is None or now - seen < within):
                return False
            self._seen[key] = now
            self._seen.move_to_end(key)  # re-marked: to the back, so the table stays in time order
            return True

    def _forget_older_than(self, cutoff: dt.datetime) -> int:
        removed = 0
        while self._seen and next(iter(self._seen.values())) <= cutoff:
            self._seen.popitem(last=False)
            removed += 1
        return removed

    def forget_handled(self, key: str) -> None:
        with self._lock:
            self._seen.pop(key, None)

    def prune_handled_events(self, older_than: dt.datetime) -> int:
        with self._lock:
            return self._forget_older_than(older_than - dt.timedelta.resolution)


def first_delivery(ledger: Ledger, key: str, usage: UsageRecorder | None) -> bool:
    """Mark a message's key; a delivery turned away (a retry, a second event) is counted."""
    first = ledger.mark_handled(key)
    if not first and usage is not None:
        usage.deduplicated("message")
    return first


class LedgerTimeout(TimeoutError):
    """The ledger did not answer within its deadline (the database is locked or silent)."""


def request_key(body: dict[str, Any]) -> str | None:
    """The ledger key of a command or button press; None for what this module does not dedupe."""
    trigger = body.get("trigger_id")
    if "command" in body and trigger:
        return f"cmd:{_team(body)}:{trigger}"
    actions = body.get("actions")
    if body.get("type") == "block_actions" and isinstance(actions, list) and actions:
        first = actions[0]
        return f"action:{_team(body)}:{trigger or '-'}:{first.get('action_ts') or first.get('action_id')}"
    return None


def _team(body: dict[str, Any]) -> str:
    """The workspace a request came from: `team_id` (commands) or `team.id` (interactivity)."""
    return str(body.get("team_id") or (body.get("team") or {}).get("id") or "-")


def share_key(channel: str, thread_ts: str | None, entry_id: str) -> str:
    return f"share:{channel}:{thread_ts or '-'}:{entry_id}"


class ReplayMiddleware(Middleware):
    """A Bolt global middleware: a command or press seen before is acknowledged and dropped.

    With `deadline` (the store), the ledger answers within that many seconds or the request is
    answered anyway: a locked or silent database costs the ack path at most that, and the call
    itself finishes (or fails) on a worker thread. A `Middleware` subclass, not a function: Bolt
    calls `process` directly, where a function middleware costs a keyword-argument injection
    on every request (bench/http.py)."""

    def __init__(self, ledger: Ledger, deadline: float | None = None) -> None:
        self.ledger = ledger
        self.deadline = deadline
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ledger") if deadline else None

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        key = request_key(req.body)
        if key is not None and not self._first(key):
            log.info("ignored a replayed request (%s)", key.split(":", 1)[0])
            return BoltResponse(status=200, body="")
        next()
        return None

    def _first(self, key: str) -> bool:
        try:
            if self._pool is None:
                return self.ledger.mark_handled(key)
            try:
                return self._pool.submit(self.ledger.mark_handled, key).result(timeout=self.deadline)
            except FutureTimeout:
                raise LedgerTimeout(f"the database gave no answer within {self.deadline:g} s") from None
        except Exception as exc:  # the store is down: answer anyway (a replay beats a dead command)
            log.warning(
                "could not check for a replay (%s): %s", type(exc).__name__, " ".join(str(exc).split())[:200]
            )
            return True
