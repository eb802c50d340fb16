"""A thread pool that can tell when all submitted work is done."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class TrackedExecutor(ThreadPoolExecutor):
    """A thread pool that can tell when all submitted work is done (the console waits on it
    before reading the next scripted line). Work runs in a copy of the submitter's context, so
    the request id of the logs follows it."""

    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
        self._pending = 0
        self._idle = threading.Condition()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._idle:
            self._pending += 1

        def tracked() -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

        context = contextvars.copy_context()
        try:
            return super().submit(context.run, tracked)
        except BaseException:
            with self._idle:
                self._pending -= 1
            raise

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)
