"""A slash command's ack deadline over HTTP, kept by the event loop instead of a second thread.

Slack wants the HTTP response to a command within 3 s; the answer goes back in it when it is
ready within the listener's budget, else a stand-in ("searching…") leaves at the budget and the
answer follows through the response URL. The listener used to compute the answer on a pool
thread while the dispatch thread waited for it with a timeout: two thread wake-ups and GIL
hand-offs per command, a tenth of an uncached command's server CPU (bench/http.py). Over HTTP the
dispatch thread now computes the answer itself, and the event loop, idle meanwhile, keeps the time:

- `server.asgi_app` runs a command's dispatch through `within_deadline`, which gives it an
  `AckDeadline` in a context variable (copied into the dispatch thread);
- the listener calls `defer(stand_in, budget)` before its slow part and `finish()` after it;
- when the budget passes first, the event loop sends `stand_in()` as the response, and
  `finish()` tells the listener that its answer is late.

Without a deadline (Socket Mode, the console) the listener keeps using its pool.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any

from slack_bolt import BoltResponse

# How often the event loop looks at a dispatch whose listener has not deferred (yet): a command
# answered at once never waits for it; one still in the middleware chain is looked at again.
POLL = 0.05

current: ContextVar[AckDeadline | None] = ContextVar("ack_deadline", default=None)

# Dispatches whose response already left as a stand-in, still finishing their late answer: the
# event loop keeps only weak references to tasks.
_late: set[asyncio.Task[BoltResponse]] = set()


class AckDeadline:
    """One command's race between its answer (on the dispatch thread) and its budget (on the
    event loop); whichever comes first decides what the HTTP response carries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stand_in: Callable[[], BoltResponse] | None = None
        self._due = math.inf
        self._finished = False
        self._expired = False

    def defer(self, stand_in: Callable[[], BoltResponse], budget: float) -> None:
        """From the listener: the response to send (made on the event loop) if its answer is not
        ready `budget` seconds from now."""
        with self._lock:
            self._stand_in, self._due = stand_in, time.monotonic() + budget

    def finish(self) -> bool:
        """From the listener, its answer ready: True when it still goes in the response, False
        when the stand-in went instead (then the answer is the listener's to deliver)."""
        with self._lock:
            self._finished = True
            return not self._expired

    def expire(self) -> BoltResponse | None:
        """From the event loop: the stand-in when it is due and the answer is not ready."""
        with self._lock:
            if self._finished or self._stand_in is None or time.monotonic() < self._due:
                return None
            self._expired = True
            stand_in = self._stand_in
        return stand_in()

    def wait(self) -> float:
        """Seconds until the next look: the budget's end, or POLL while nothing was deferred."""
        with self._lock:
            if self._stand_in is None:
                return POLL
            return max(self._due - time.monotonic(), 0.0)

    async def race(self, task: asyncio.Task[BoltResponse]) -> BoltResponse:
        """The dispatch's response if it comes in time, else the stand-in (the task goes on)."""
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[BoltResponse | None] = loop.create_future()
        timer: asyncio.TimerHandle

        def done(_: asyncio.Task[BoltResponse]) -> None:
            if not outcome.done():
                outcome.set_result(None)

        def look() -> None:
            nonlocal timer
            if outcome.done():
                return
            stand_in = self.expire()
            if stand_in is None:
                timer = loop.call_later(self.wait(), look)
                return
            _late.add(task)
            task.add_done_callback(_forget)
            outcome.set_result(stand_in)

        task.add_done_callback(done)
        timer = loop.call_later(self.wait(), look)
        try:
            stand_in = await outcome
        finally:
            timer.cancel()
        return stand_in if stand_in is not None else task.result()


def _forget(task: asyncio.Task[BoltResponse]) -> None:
    """A late dispatch is done: drop it, and read its error so asyncio does not report it again
    (the listener logged what failed)."""
    _late.discard(task)
    if not task.cancelled():
        task.exception()


async def within_deadline(dispatch: Callable[[], Coroutine[Any, Any, BoltResponse]]) -> BoltResponse:
    """Run `dispatch()` with an `AckDeadline` its listener can defer to; the response in time."""
    deadline = AckDeadline()
    token = current.set(deadline)
    try:
        task = asyncio.ensure_future(dispatch())  # the task runs in a copy of this context
    finally:
        current.reset(token)
    return await deadline.race(task)
