"""Which thread belongs to which entry: posting registers it, follow-up answering looks it up.
The in-memory registry serves one process (console, tests); the SQL store's is shared by replicas."""

from __future__ import annotations

import threading
from typing import Protocol


class ThreadRegistry(Protocol):
    """Threads the bot started for an entry, keyed by channel and the parent message's ts."""

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None: ...

    def entry_for(self, channel: str, thread_ts: str) -> str | None: ...


class InMemoryThreadRegistry:
    def __init__(self) -> None:
        self._threads: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None:
        with self._lock:
            self._threads[(channel, thread_ts)] = entry_id

    def entry_for(self, channel: str, thread_ts: str) -> str | None:
        with self._lock:
            return self._threads.get((channel, thread_ts))
