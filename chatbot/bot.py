"""The running bot: every piece `chatbot.wiring.build` made, and its lifecycle (start the jobs once
the digests are loaded, readiness, close)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from apscheduler.schedulers.background import BackgroundScheduler
from slack_bolt import App
from slack_sdk import WebClient

from chatbot.daily.jobs import Subscriptions
from chatbot.daily.poster import DailyPoster
from chatbot.daily.scheduler import DailyScheduler
from chatbot.digest import Library
from chatbot.executors import TrackedExecutor
from chatbot.live import LiveIndex
from chatbot.observability import Metrics
from chatbot.settings import Settings
from chatbot.slack.fairness import FairExecutor
from chatbot.slack.handlers.command import Searchable
from chatbot.slack.handlers.followups import FollowUps
from chatbot.slack.handlers.install import InstallEvents
from chatbot.slack.handlers.messages import FollowUpHandler
from chatbot.slack.loading import LoadingGate
from chatbot.slack.ratelimits import RateLimits
from chatbot.store import (
    OutageQueue,
    SqlStore,
    ThreadRegistry,
)
from chatbot.usage.recorder import UsageRecorder
from chatbot.usage.weekly import WeeklyReport

if TYPE_CHECKING:
    from chatbot.github import GitHubFacts

log = logging.getLogger(__name__)


@dataclass
class Bot:
    """Every piece the commands need, built from settings."""

    settings: Settings
    library: Library
    index: Searchable
    live: LiveIndex
    threads: ThreadRegistry
    client: WebClient
    app: App
    signing_secret: str
    follow_up: FollowUpHandler
    executors: list[TrackedExecutor | FairExecutor] = field(default_factory=list)
    store: SqlStore | None = None
    daily: DailyPoster | None = None
    scheduler: DailyScheduler | None = None
    subscriptions: Subscriptions | None = None
    metrics: Metrics = field(default_factory=Metrics)
    usage: UsageRecorder | None = None
    curator: WeeklyReport | None = None
    curator_jobs: BackgroundScheduler | None = None  # started by serve
    # More readiness checks by name, each "ok" or a one-line problem (Socket Mode: its link).
    ready_checks: dict[str, Callable[[], str]] = field(default_factory=dict)
    after_load: list[Callable[[], None]] = field(default_factory=list)  # run by `start()`, before the jobs
    github: GitHubFacts | None = None  # live PR facts (GITHUB_* settings), refreshed by serve
    closed: threading.Event = field(default_factory=threading.Event)
    rate_limits: RateLimits | None = None  # every Slack client's holds; waits end at close
    installs: InstallEvents | None = None  # app_uninstalled / tokens_revoked: the jobs stay stopped
    outage: OutageQueue | None = None  # work held while the database is away (with a store)
    loading: LoadingGate | None = None  # "still loading"; its waiting thread replies go on after the load

    def health(self) -> dict[str, object]:
        """What /healthz reports besides readiness: the library is loaded."""
        return {"entries": len(self.library), "errors": len(self.library.errors)}

    def readiness(self) -> dict[str, str]:
        """What must be "ok" for Slack traffic to be worth sending here: the digests loaded, the
        store answering, and the `ready_checks` (the Socket Mode link)."""
        checks: dict[str, str] = {"library": self.live.state()}
        if self.store is not None:
            checks["store"] = self.store.ready()
        for name, check in self.ready_checks.items():
            checks[name] = check()
        return checks

    def start(self) -> threading.Thread:
        """Load the digests on a background thread (serve answers "still loading" meanwhile); then
        `after_load`, the thread replies that waited, and the jobs: nothing picks or announces
        from an empty library."""

        def start_jobs() -> None:
            if self.closed.is_set() or (self.installs is not None and self.installs.gone.is_set()):
                return
            for warm_up in self.after_load:
                try:
                    warm_up()
                except Exception:  # an answer reads what it needs anyway; the jobs must start
                    log.exception("warming up after the load failed")
            if self.loading is not None:
                self.loading.release()  # the thread replies that arrived while loading
            if self.scheduler is not None:
                self.scheduler.start()
            if self.curator_jobs is not None:
                self.curator_jobs.start()
            if self.github is not None:
                self.github.start(self.closed)

        return self.live.start_loading(then=start_jobs)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once no answer or lazy listener is running (for the console's script mode)."""
        return all(executor.wait_idle(timeout) for executor in self.executors)

    def close(self, drain: float = 5.0) -> None:
        """Stop the jobs, cut model streams and rate-limit waits (the answers at hand are posted),
        let running answers finish (up to `drain` seconds), then stop."""
        self.closed.set()
        if self.rate_limits is not None:
            self.rate_limits.stop()
        if isinstance(self.follow_up, FollowUps) and self.follow_up.model is not None:
            self.follow_up.model.cut.cut()
        if self.scheduler is not None:
            self.scheduler.shutdown()
        if self.curator_jobs is not None and self.curator_jobs.running:
            self.curator_jobs.shutdown(wait=False)
        self.wait_idle(drain)
        if self.outage is not None:  # what still waits for the database: its people are told
            self.outage.close()
        for executor in self.executors:
            executor.shutdown(wait=False, cancel_futures=True)
        if self.store is not None:
            self.store.close()
