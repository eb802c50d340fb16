"""A small thread-safe cache whose entries expire: what Slack said about a channel, for a while.

Who is in a channel (`membership.py`), what kind of conversation it is (`usage/places.py`) and
a person's locale (`locale.py`) are asked of Slack once and kept for a time; the oldest entries
go first past `max_size`.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class ExpiringCache(Generic[K, V]):
    """`get(key)` → the value put less than `keep` seconds ago, else None."""

    def __init__(self, keep: float, max_size: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep = keep
        self.max_size = max_size
        self.clock = clock
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] <= self.clock():
                return None
            self._entries.move_to_end(key)
            return hit[1]

    def put(self, key: K, value: V, keep: float | None = None) -> None:
        """Keep `value` for `keep` seconds (the cache's own time when None)."""
        with self._lock:
            self._entries[key] = (self.clock() + (self.keep if keep is None else keep), value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_size:
                self._entries.popitem(last=False)
