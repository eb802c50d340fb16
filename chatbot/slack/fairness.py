"""Sharing the answer threads fairly between the people asking, around Slack's rate limits.

One person's 100 DMs must not fill every thread while another's question waits: `FairExecutor`
keeps a queue per asker, runs at most `per_asker` of one asker's tasks at once, round-robin, and
never starts a task whose channel is rate-limited (it waits queued, no thread sleeps through a
`Retry-After`). docs/slack.md: fair sharing.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from slack_bolt import BoltContext, BoltResponse

from chatbot.slack.ratelimits import RateLimits

# Who asked and where the answer goes, for the request being handled (set by `note_asker`).
ASKER: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar("asker", default=("", ""))
# The method a task's answer is posted with: its hold keeps the task queued.
ANSWER_METHOD = "chat.postMessage"


def note_asker(context: BoltContext, next: Callable[[], BoltResponse]) -> BoltResponse:
    """Bolt middleware: the request's user and channel, for the executor of its lazy listeners.
    Set, not reset: Bolt runs the listeners after the middleware returned, on the same thread,
    and every request sets its own."""
    ASKER.set((str(context.user_id or ""), str(context.channel_id or "")))
    return next()


@dataclass
class _Task:
    run: Callable[[], Any]
    future: Future[Any]
    channel: str


@dataclass
class _Asker:
    waiting: deque[_Task] = field(default_factory=deque)
    running: int = 0


class FairExecutor(ThreadPoolExecutor):
    """A thread pool that runs tasks round-robin across askers, at most `per_asker` of one asker
    at a time, and keeps a task queued while its channel is rate-limited.
    Tracks pending work like `TrackedExecutor` (`wait_idle`)."""

    def __init__(
        self,
        max_workers: int,
        thread_name_prefix: str,
        limits: RateLimits,
        per_asker: int = 2,
    ) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self.workers = max_workers
        self.limits = limits
        self.per_asker = per_asker
        self._askers: OrderedDict[str, _Asker] = OrderedDict()
        self._running = 0
        self._pending = 0
        self._lock = threading.Condition()
        self._timer: threading.Timer | None = None
        self._timer_at = 0.0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        user, channel = ASKER.get()
        context = contextvars.copy_context()
        future: Future[Any] = Future()
        task = _Task(lambda: context.run(fn, *args, **kwargs), future, channel)
        with self._lock:
            self._pending += 1
            self._askers.setdefault(user, _Asker()).waiting.append(task)
            self._dispatch()
        return future

    def _dispatch(self) -> None:
        """Start queued tasks while threads are free (lock held): one per asker per round."""
        started = True
        while started and self._running < self.workers:
            started = False
            for user in list(self._askers):
                if self._running >= self.workers:
                    return
                task = self._next_of(user)
                if task is not None:
                    self._start(user, task)
                    started = True

    def _next_of(self, user: str) -> _Task | None:
        """The asker's next task when it may start now; a rate-limited one arms the timer."""
        asker = self._askers[user]
        if asker.running >= self.per_asker or not asker.waiting:
            return None
        wait = (
            self.limits.remaining(asker.waiting[0].channel, ANSWER_METHOD)
            if asker.waiting[0].channel
            else 0.0
        )
        if wait > 0 and not self.limits.stopping:
            self._wake_in(wait)
            return None
        asker.running += 1
        self._askers.move_to_end(user)  # round-robin: this asker goes last
        return asker.waiting.popleft()

    def _start(self, user: str, task: _Task) -> None:
        self._running += 1
        super().submit(self._run, user, task)

    def _run(self, user: str, task: _Task) -> None:
        try:
            if task.future.set_running_or_notify_cancel():
                try:
                    task.future.set_result(task.run())
                except BaseException as exc:
                    task.future.set_exception(exc)
        finally:
            with self._lock:
                self._running -= 1
                self._pending -= 1
                asker = self._askers[user]
                asker.running -= 1
                if not asker.waiting and not asker.running:
                    del self._askers[user]
                self._dispatch()
                self._lock.notify_all()

    def _wake_in(self, seconds: float) -> None:
        """Run the dispatch again when the first hold is over (one timer, for the earliest)."""
        at = self.limits.clock() + seconds
        if self._timer is not None and self._timer.is_alive():
            if self._timer_at <= at:
                return
            self._timer.cancel()
        self._timer_at = at
        self._timer = threading.Timer(seconds, self._on_timer)
        self._timer.daemon = True
        self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            self._dispatch()

    def wait_idle(self, timeout: float) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: self._pending == 0, timeout)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            if cancel_futures:
                for asker in self._askers.values():
                    for task in asker.waiting:
                        task.future.cancel()
                        self._pending -= 1
                    asker.waiting.clear()
        super().shutdown(wait=wait, cancel_futures=cancel_futures)
