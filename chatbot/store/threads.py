"""Which thread belongs to which entry: the seam between posting an entry and answering in its thread.

Posting (Share to channel, the PR of the day) registers the thread; follow-up answering looks
it up. The in-memory registry serves one process (console, tests); the store provides the SQL
one that survives restarts and is shared by replicas.
"""

from __future__ import annotations

import threading
from typing import Protocol


class ThreadRegistry(Protocol):
    """Threads the bot started for an entry, keyed by channel and the parent message's ts."""

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None: ...

    def entry_for(self, channel: str, thread_ts: str) -> str | None: ...


class InMemoryThreadRegistry:
    """A ThreadRegistry in a dict, for one process."""

    def __init__(self) -> None:
        self._threads: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None:
        with self._lock:
            self._threads[(channel, thread_ts)] = entry_id

    def entry_for(self, channel: str, thread_ts: str) -> str | None:
        with self._lock:
            return self._threads.get((channel, thread_ts))
