"""The facts every replica reads, and the refresh one of them runs (the store decides which).

`GitHubFacts.lookup` answers from memory (cards, answers and the picker never wait on GitHub or
the database); `tick` claims this period's refresh slot (or a slot for new entries) and, when it
won it, refreshes; every replica then re-reads the store. `serve` runs `tick` on a background
thread: at once, then every poll, so new entries are fetched within a poll and the rest every
GITHUB_REFRESH.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import threading
from collections.abc import Callable, Sequence

from chatbot.digest import Entry, PrFacts, facts_lookup
from chatbot.github.refresh import FactsRefresher, RefreshReport, load_facts
from chatbot.store.prfacts import PrFactsStore

log = logging.getLogger("chatbot.github")

# How often the background job looks for new entries and reloads the facts other replicas fetched.
POLL_SECONDS = 60.0


class GitHubFacts:
    """The PR facts of this process (reloaded from the store) and its share of the refreshing."""

    def __init__(
        self,
        refresher: FactsRefresher,
        store: PrFactsStore,
        entries: Callable[[], Sequence[Entry]],
        every: dt.timedelta,
        owner: str,
        *,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        self.refresher = refresher
        self.store = store
        self.entries = entries
        self.every = every
        self.owner = owner
        self.clock = clock
        self._lookup = facts_lookup({})
        self.refreshed = threading.Event()  # set after each tick (tests wait on it)

    def lookup(self, entry: Entry) -> PrFacts | None:
        """The entry's facts as last read from the store; None when unknown."""
        return self._lookup(entry)

    def reload(self) -> None:
        self._lookup = facts_lookup(load_facts(self.store))

    def tick(self) -> RefreshReport | None:
        """Refresh when this replica claims the period's slot, or new entries' slot; then reload."""
        try:
            report = self._refresh_if_claimed()
            self.reload()
        except Exception:  # the store or GitHub failing never stops the job: the next tick retries
            log.exception("GitHub facts: refresh failed; the last facts are kept")
            report = None
        self.refreshed.set()
        return report

    def _refresh_if_claimed(self) -> RefreshReport | None:
        now = self.clock()
        entries = list(self.entries())
        period = int(now.timestamp() // self.every.total_seconds())
        if self.store.claim_refresh(f"every:{self.every.total_seconds():.0f}:{period}", self.owner, now):
            return self._refresh(entries)
        missing = self.refresher.missing(entries)
        if not missing:
            return None
        slot = "new:" + hashlib.sha1(repr(missing).encode()).hexdigest()[:20]
        if self.store.claim_refresh(slot, self.owner, now):
            wanted = set(missing)
            return self._refresh([e for e in entries if (e.repo, e.pr) in wanted])
        return None

    def _refresh(self, entries: Sequence[Entry]) -> RefreshReport:
        report = self.refresher.refresh(entries)
        for problem in report.problems:
            log.warning("GitHub facts: %s", problem)
        for line in [*report.changes, report.lines()[-1]]:
            log.info("GitHub facts: %s", line)
        return report

    def run(self, stop: threading.Event, poll: float = POLL_SECONDS) -> None:
        """Read the stored facts, tick at once, then every `poll` seconds until `stop` is set."""
        try:
            self.reload()
        except Exception:
            log.exception("GitHub facts: cannot read the stored facts")
        self.tick()
        while not stop.wait(poll):
            self.tick()

    def start(self, stop: threading.Event, poll: float = POLL_SECONDS) -> threading.Thread:
        thread = threading.Thread(target=self.run, args=(stop, poll), name="github-facts", daemon=True)
        thread.start()
        return thread
