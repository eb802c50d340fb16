"""A circuit breaker: after a few failures in a row, stop calling the model for a while.

A model server that is down would otherwise cost every follow-up the whole LLM_TIMEOUT before the
extractive answer is posted. Open → calls are skipped until `cooldown` passes; then one call is let
through (half-open): success closes the breaker, failure opens it again. A server that says how
long to wait (429/503 with Retry-After) opens it at once for that long: asking again sooner only
costs the next asker a refused call.

Our own, not a library's: pybreaker (and `circuitbreaker`) wrap one call, and pybreaker holds its
lock for the whole call, which would queue every model stream behind the one in flight; a model
answer here is a stream read against a deadline, and a Retry-After opens the breaker for the time
the server asked, not a fixed timeout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CircuitBreaker:
    """`on_outcome` hears each call's outcome (`ok`, `failed`, `circuit_open`: the metrics)."""

    def __init__(
        self,
        failures: int = 3,
        cooldown: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        on_outcome: Callable[[str], None] = lambda _outcome: None,
    ) -> None:
        self.on_outcome = on_outcome
        self.threshold = failures
        self.cooldown = cooldown
        self.clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial = False
        self._hold: float | None = None
        self._lock = threading.Lock()

    def allow(self) -> bool:
        """May a call go out now? In half-open state only one caller gets True."""
        with self._lock:
            if self._opened_at is None:
                return True
            wait = self.cooldown if self._hold is None else self._hold
            if self.clock() - self._opened_at < wait or self._trial:
                allowed = False
            else:
                self._trial = allowed = True
        if not allowed:
            self.on_outcome("circuit_open")
        return allowed

    def success(self) -> None:
        self.on_outcome("ok")
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial = False
            self._hold = None

    def failure(self, retry_after: float | None = None) -> None:
        """One failed call; `retry_after`: the seconds the server asked for, which open the breaker now."""
        self.on_outcome("failed")
        with self._lock:
            self._failures += 1
            self._trial = False
            if retry_after:
                self._opened_at, self._hold = self.clock(), retry_after
            elif self._failures >= self.threshold or self._opened_at is not None:
                self._opened_at, self._hold = self.clock(), None
