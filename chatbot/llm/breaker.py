"""A circuit breaker: after a few failures in a row, stop calling the model for a while.

A model server that is down would otherwise cost every follow-up the whole LLM_TIMEOUT before the
extractive answer is posted. Open → calls are skipped until `cooldown` passes; then one call is let
through (half-open): success closes the breaker, failure opens it again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CircuitBreaker:
    def __init__(
        self, failures: int = 3, cooldown: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold = failures
        self.cooldown = cooldown
        self.clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False
        self._lock = threading.Lock()

    def allow(self) -> bool:
        """May a call go out now? In half-open state only one caller gets True."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self.clock() - self._opened_at < self.cooldown or self._trial:
                return False
            self._trial = True
            return True

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial = False

    def failure(self) -> None:
        with self._lock:
            self._failures += 1
            self._trial = False
            if self._failures >= self.threshold or self._opened_at is not None:
                self._opened_at = self.clock()

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None
