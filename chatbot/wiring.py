"""The one place that builds the object graph from settings: library, index, Slack app.

`build(settings)` returns a `Bot` holding every piece; nothing else reads settings. Tests and the
console pass replacements (an index wrapper, a `today` picker, a thread registry, a follow-up
handler) as keyword arguments; with a store (serve) the daily poster and its scheduler are
built too.
"""

from __future__ import annotations

import contextvars
import datetime as dt
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from slack_bolt import App
from slack_sdk import WebClient

from chatbot.answers import Answerer
from chatbot.daily import Pick, TopicFilter
from chatbot.daily.announcer import Announcer
from chatbot.daily.poster import DailyPoster, SlackMessage, process_owner
from chatbot.daily.scheduler import DailyScheduler
from chatbot.daily.subscription import (
    Subscription,
    configured_subscriptions,
    default_schedule,
    effective_subscriptions,
)
from chatbot.daily.topics import Resolved, entries_on, resolve_topics
from chatbot.digest import Entry, FactsLookup, Library, PrFacts, Problem, facts_lookup, no_facts
from chatbot.heap import build_long_lived
from chatbot.observability import LibraryState, Metrics, count_slack_calls, request_id_middleware
from chatbot.observability.metrics import CountedBreaker
from chatbot.search import Glossary, SearchIndex, SearchResult, load_glossary
from chatbot.settings import Settings, SettingsError
from chatbot.slack.app import build_slack_app
from chatbot.slack.blocks import render_entry_card
from chatbot.slack.curator import render_curator_report
from chatbot.slack.fairness import FairExecutor
from chatbot.slack.handlers.actions import ActionHandlers
from chatbot.slack.handlers.command import CommandHandler, Request, Searchable
from chatbot.slack.handlers.dm import DirectMessages
from chatbot.slack.handlers.feedback import FeedbackHandlers
from chatbot.slack.handlers.followups import FollowUps, HandledEvents, InMemoryHandledEvents
from chatbot.slack.handlers.home import HomeTab
from chatbot.slack.handlers.install import InstallEvents
from chatbot.slack.handlers.links import LinkPreviews
from chatbot.slack.handlers.messages import FollowUpHandler
from chatbot.slack.handlers.model_answers import ModelAnswers
from chatbot.slack.handlers.shortcut import MessageShortcut
from chatbot.slack.handlers.subscriptions import SubscriptionCommands
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.loading import LoadingGate
from chatbot.slack.locale import UserLanguages, slack_locale
from chatbot.slack.membership import ChannelMembers, slack_members
from chatbot.slack.observed import (
    ObservedAnswerer,
    ObservedAnswers,
    ObservedHandledEvents,
    ObservedSearch,
    SharedThreads,
    observed_daily_run,
)
from chatbot.slack.ratelimits import RateLimits
from chatbot.slack.replays import DeadlineLedger, InMemoryReplayLedger, ReplayLedger
from chatbot.slack.retries import slack_web_client
from chatbot.slack.subscription_blocks import render_announcement
from chatbot.snapshot import Key, Snapshots
from chatbot.store import (
    InMemoryThreadRegistry,
    OutageQueue,
    RememberedThreads,
    SqlStore,
    SubscriptionStore,
    ThreadRegistry,
)
from chatbot.usage import UsageStore, salt_key
from chatbot.usage.places import PlaceMiddleware, Places, conversation_kind
from chatbot.usage.recorder import UsageRecorder
from chatbot.usage.report import CuratorReport
from chatbot.usage.weekly import WeeklyReport, weekly_scheduler

if TYPE_CHECKING:
    from chatbot.github import GitHubClient, GitHubFacts
    from chatbot.llm import ModelClient

log = logging.getLogger(__name__)

# A token the console and tests use when no SLACK_BOT_TOKEN is configured.
LOCAL_BOT_TOKEN = "xoxb-local-console"


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


class LiveIndex:
    """The search index of a library, rebuilt when a digest file changes. The glossary (bundled +
    the digest folder's glossary files) is reloaded with it.

    Loaded once by `load()`: from the snapshot in CACHE_DIR when one matches the digest files and
    the code (`chatbot.snapshot`), else parsed and indexed (and the snapshot written). `serve`
    loads on a background thread (`start_loading`) and is not ready until it is done; `state()`
    says which. Whoever asks for the index before that waits for it.

    Then off the request path: a request at most starts a check (every `refresh_every` seconds)
    on a background thread and answers from the index it has; the reload (only changed files are
    parsed again) and the new index are built there and swapped in when ready. `generation` is
    the generation of the index being served, so answers cached under it match what was searched.
    """

    def __init__(
        self,
        library: Library,
        refresh_every: float = 2.0,
        *,
        snapshots: Snapshots | None = None,
        load: bool = True,
    ) -> None:
        self.library = library
        self.refresh_every = refresh_every
        self.snapshots = snapshots
        self.loaded_from: str = ""  # "snapshot" or "digest files" once loaded
        self._newest_first: tuple[int, list[Entry]] = (-1, [])
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._reloading = False
        self._loaded = threading.Event()
        self._failed: str | None = None
        self._index: SearchIndex | None = None
        self._generation = 0
        self._checked = time.monotonic()
        if load:
            self.load()

    def load(self) -> None:
        """Load the library and its index (the snapshot's when it matches); raises what failed.
        A snapshot is written after the index is in service, not before."""
        started = time.perf_counter()
        glossary_problems: list[Problem] = []
        try:
            key = Key.of(self.library.folder) if self.snapshots is not None else None
            index = self._restore(key)
            if index is None:
                index, glossary_problems = self._parse()
        except Exception as exc:
            self._failed = f"{type(exc).__name__}: {exc}"
            self._loaded.set()
            raise
        self._index, self._generation = index, self.library.generation
        self._checked = time.monotonic()
        self._loaded.set()
        log.info(
            "loaded %d digest entries from the %s in %.2f s",
            len(self.library),
            self.loaded_from,
            time.perf_counter() - started,
        )
        if self.loaded_from == "snapshot" and self.snapshots is not None:
            build_long_lived(self.snapshots.finish)
            # The problems were saved with the snapshot: a broken file is reported on every start.
            self._report(index.glossary.problems)
        else:
            self._report(glossary_problems)
            self._save(key, index)

    def _save(self, key: Key | None, index: SearchIndex) -> None:
        """The snapshot of what was loaded under `key` (taken before the files were read)."""
        if self.snapshots is not None and key is not None and self.snapshots.save(key, self.library, index):
            log.info("saved the digest snapshot %s", self.snapshots.path)

    def start_loading(self, then: Callable[[], None] = lambda: None) -> threading.Thread:
        """`load()` on a background thread, then `then()` when it succeeded."""

        def run() -> None:
            try:
                self.load()
            except Exception:
                log.exception("loading the digest folder %s failed", self.library.folder)
                return
            then()

        thread = threading.Thread(target=run, name="digest-load", daemon=True)
        thread.start()
        return thread

    def state(self) -> str:
        """The readiness check: "ok" once the library is loaded, else what is going on."""
        if self._failed is not None:
            return f"loading the digests failed: {self._failed}"
        return "ok" if self._loaded.is_set() else "loading the digests"

    def _restore(self, key: Key | None) -> SearchIndex | None:
        """The snapshot's index (the library filled from it), when there is a matching one."""
        snapshots = self.snapshots
        if snapshots is None or key is None:
            return None
        restored = build_long_lived(lambda: snapshots.load(key, self.library))
        if restored is not None:
            self.loaded_from = "snapshot"
        return restored

    def _parse(self) -> tuple[SearchIndex, list[Problem]]:
        """Parse the folder and build the index (entries live as long as the index: parsed with the
        collector paused, like the index); the glossary's problems, for `_report`."""
        build_long_lived(self.library.refresh)
        built = self._build()
        self.loaded_from = "digest files"
        return built

    def current(self) -> SearchIndex:
        """The index to answer from now; starts a background check when one is due. Before the
        first load is done, waits for it."""
        index = self._index
        if index is None:
            index = self._wait_loaded()
        if time.monotonic() - self._checked >= self.refresh_every:
            with self._lock:
                if not self._reloading and time.monotonic() - self._checked >= self.refresh_every:
                    self._reloading = True
                    threading.Thread(target=self._reload, name="digest-reload", daemon=True).start()
        return index

    def ready(self) -> bool:
        """True once the library is loaded and indexed (before that, requests get "still loading")."""
        return self._index is not None

    def _wait_loaded(self) -> SearchIndex:
        self._loaded.wait()
        if self._index is None:
            raise RuntimeError(self.state())
        return self._index

    def _reload(self) -> None:
        try:
            if self.library.refresh():
                generation = self.library.generation
                index, glossary_problems = self._build()
                self._index, self._generation = index, generation
                self._report(glossary_problems)
        except Exception:  # a reload must never take the bot down; the previous index stays
            log.exception("reloading the digest folder %s failed", self.library.folder)
        finally:
            with self._idle:
                self._reloading = False
                self._checked = time.monotonic()
                self._idle.notify_all()

    def wait_reloaded(self, timeout: float = 30.0) -> bool:
        """Check the folder now and wait until any reload has been swapped in (CLI, tests)."""
        if not self._loaded.wait(timeout):
            return False
        with self._idle:
            self._checked = -float("inf")
        self.current()
        with self._idle:
            return self._idle.wait_for(lambda: not self._reloading, timeout)

    def _build(self) -> tuple[SearchIndex, list[Problem]]:
        """The index of the library as loaded, and the problems of the glossary it was built with."""
        glossary = load_glossary(self.library.folder)
        return build_long_lived(lambda: SearchIndex.build(self.library.entries, glossary)), glossary.problems

    def _report(self, glossary_problems: list[Problem]) -> None:
        """Log the digest files' and the glossary's problems once the index is in service, not
        before: deciding the digests' verdict warnings analyses every note not read yet (a second
        of CPU at 10k entries), which also readies the parts the first answers read."""
        for problem in [*self.library.problems, *glossary_problems]:
            log.warning("%s", problem)

    @property
    def generation(self) -> int:
        """The library generation of the index being served (answers cached under it go stale
        once a newer index is swapped in)."""
        self.current()
        return self._generation

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        return self.current().search(query, limit=limit, offset=offset)

    def topics(self) -> list[tuple[str, int]]:
        return self.current().topics()

    def latest(self, count: int) -> Sequence[Entry]:
        """Newest entries first: by PR date, then digest and position."""
        self.current()
        generation = self.library.generation
        if self._newest_first[0] != generation:  # sorted once per library load, not per command
            ordered = sorted(
                self.library.entries,
                key=lambda e: (e.date.isoformat() if e.date else "", e.digest, e.position),
                reverse=True,
            )
            self._newest_first = (generation, ordered)
        return self._newest_first[1][:count]

    def entries(self) -> Sequence[Entry]:
        """Every entry of the library as it is now (reloaded when a file changed)."""
        self.current()
        return self.library.entries

    def newest(self) -> Entry | None:
        """The PR of the day where there is no store (console, `build` without one): the newest entry."""
        newest = self.latest(1)
        return newest[0] if newest else None


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
        """Checks that must be "ok" for Slack traffic to be worth sending here: the digests are
        loaded (200 means the bot can answer), the store answers (threads, dedup and the daily
        post live there) and the named `ready_checks` (the Socket Mode link) pass."""
        checks: dict[str, str] = {"library": self.live.state()}
        if self.store is not None:
            checks["store"] = self.store.ready()
        for name, check in self.ready_checks.items():
            checks[name] = check()
        return checks

    def start(self) -> threading.Thread:
        """Load the digests on a background thread (serve listens meanwhile, answering "still
        loading"); once they are loaded, `after_load` (the answerer's data), the thread replies that
        waited (`loading.release`), then the daily
        post and the weekly report start, so that nothing picks or announces from an empty
        library."""

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
        """Stop the scheduler, cut model streams and rate-limit waits (the answers at hand are
        posted), let running answers finish (up to `drain` seconds), then stop."""
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


def web_client(
    settings: Settings, token: str | None, limits: RateLimits | None = None, *, daily: bool = False
) -> WebClient:
    """The bot's Web API client for SLACK_API_URL (chatbot.slack.retries.slack_web_client: Slack's
    Retry-After per channel and method on `limits`, nothing posted twice). It waits at most 10 s
    for an answer (someone is waiting on it), less when SLACK_TIMEOUT says so; the jobs that post
    (`daily`: PR of the day, announcements) wait SLACK_TIMEOUT."""
    timeout = settings.slack_timeout if daily else min(10.0, settings.slack_timeout)
    return slack_web_client(
        token, settings.slack_api_url, limits=limits, timeout=timeout, reports_unknown=daily
    )


def build(
    settings: Settings,
    *,
    local: bool = False,
    index: Callable[[LiveIndex], Searchable] | None = None,
    today: Callable[[], Entry | None] | None = None,
    threads: ThreadRegistry | None = None,
    follow_up: FollowUpHandler | None = None,
    handled: HandledEvents | None = None,
    ack_budget: float = 1.5,
    page_size: int = 5,
    answer_cache: int = 512,
    store: SqlStore | None = None,
    snapshots: Snapshots | None = None,
    load: bool = True,
) -> Bot:
    """The bot's object graph. `local=True` (console) accepts missing Slack credentials; else
    SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (HTTP) or SLACK_APP_TOKEN (Socket Mode) are required.

    `index` wraps the live index (tests inject slowness); `today` is the PR-of-the-day seam. A
    `store` (serve) adds the daily post, its scheduler and GitHub's facts; with `load=False`
    `Bot.start()` loads the digests in the background ("still loading" meanwhile).
    """
    token, secret = slack_credentials(settings, local)
    live = LiveIndex(Library(settings.digest_dir), snapshots=snapshots, load=load)
    github = build_github_facts(settings, store, live.entries) if store is not None else None
    outage = OutageQueue() if store is not None else None
    facts = github.lookup if github else no_facts
    parts = _parts(settings, token, live, index, threads, store, facts, outage)
    dedup = handled or store
    follow_up, after_load = _follow_ups(parts, dedup, follow_up, load)
    daily = _daily_parts(parts, store) if store is not None else None
    answer_pool = TrackedExecutor(max_workers=16, thread_name_prefix="answer")
    listener_pool = FairExecutor(16, "listener", parts.rate_limits)
    answers = _answers(parts, daily, today, page_size, answer_cache)
    handlers = _handlers(parts, answers, answer_pool, ack_budget, dedup, store, daily)
    handlers["installs"] = installs = InstallEvents(lambda: _stop_jobs(daily))
    gate = _loading_gate(parts, listener_pool, follow_up)
    return Bot(
        settings=settings,
        library=live.library,
        index=parts.searchable,
        live=live,
        threads=parts.registry,
        client=parts.client,
        app=_slack_app(parts, secret, follow_up, listener_pool, handlers, gate),
        signing_secret=secret,
        follow_up=follow_up,
        executors=[answer_pool, listener_pool, parts.usage_writer],
        store=store,
        metrics=parts.metrics,
        usage=parts.usage,
        after_load=after_load,
        github=github,
        rate_limits=parts.rate_limits,
        installs=installs,
        loading=gate,
        outage=outage,
        **_daily_fields(daily),
    )


def _follow_ups(
    parts: _Parts, dedup: HandledEvents | None, given: FollowUpHandler | None, load: bool
) -> tuple[FollowUpHandler, list[Callable[[], None]]]:
    """The follow-up handler (the one given, else built) and what to run once the digests are in:
    loading in the background (serve), the answerer reads its data then, not before ready."""
    if given is not None:
        return given, []
    follow_ups = build_follow_ups(
        parts.settings,
        parts.live.library,
        parts.observed("mention"),
        parts.registry,
        dedup,
        parts.usage,
        parts.languages,
        warm=load,
        facts=parts.facts,
        outage=parts.outage,
    )
    return follow_ups, [] if load else [follow_ups.answerer.warm_up]


def _loading_gate(parts: _Parts, listeners: Executor, follow_up: FollowUpHandler) -> LoadingGate:
    """ "Still loading" until the digests are in; thread replies wait for them (`release`)."""
    languages = parts.languages
    # No Slack call on the gate's path: the language of a person already known, else the default.
    return LoadingGate(
        parts.live.ready,
        parts.client,
        lambda user: languages.cached(user) or languages.default,
        listeners,
        follow_up=follow_up,
    )


def _slack_app(
    parts: _Parts,
    secret: str,
    follow_up: FollowUpHandler,
    listeners: Executor,
    handlers: dict[str, Any],
    gate: LoadingGate,
) -> App:
    """The Bolt app: "still loading" until the digests are, then the handlers; request ids logged."""
    app = build_slack_app(
        client=parts.client,
        signing_secret=secret,
        follow_up=follow_up,
        listener_executor=listeners,
        loading=gate,
        rate_limits=parts.rate_limits,
        **handlers,
    )
    app.use(request_id_middleware(logging.getLogger("chatbot.slack.requests")))
    app.use(PlaceMiddleware())  # where each request was made: the report quotes only public text
    return app


@dataclass
class _Parts:
    """What the steps of `build` share: the digests, the Slack client, usage and metrics."""

    settings: Settings
    live: LiveIndex
    searchable: Searchable
    registry: ThreadRegistry
    metrics: Metrics
    usage: UsageRecorder
    usage_writer: TrackedExecutor
    client: WebClient
    languages: UserLanguages
    members: ChannelMembers
    facts: FactsLookup  # GitHub's facts of an entry's PR (none without GITHUB_* settings)
    rate_limits: RateLimits
    outage: OutageQueue | None = None

    def observed(self, source: str) -> ObservedSearch:
        """The search as a surface (`command`, `dm`, `home`…) uses it, counted under its name."""
        return ObservedSearch(self.searchable, self.usage, source, lambda: self.live.generation)


def _parts(
    settings: Settings,
    token: str,
    live: LiveIndex,
    index: Callable[[LiveIndex], Searchable] | None,
    threads: ThreadRegistry | None,
    store: SqlStore | None,
    facts: FactsLookup = no_facts,
    outage: OutageQueue | None = None,
) -> _Parts:
    """The digests as searched, the Slack client, metrics and usage recording."""
    metrics = Metrics()
    metrics.watch_library(lambda: library_state(live.library))
    usage_writer = TrackedExecutor(max_workers=1, thread_name_prefix="usage")
    rate_limits = RateLimits()
    client = count_slack_calls(web_client(settings, token, rate_limits), metrics)
    return _Parts(
        rate_limits=rate_limits,
        settings=settings,
        live=live,
        searchable=index(live) if index else live,
        # Known threads are routed without the database; a registration it cannot take is held.
        registry=RememberedThreads(threads or store or InMemoryThreadRegistry(), outage),
        metrics=metrics,
        usage=build_usage(settings, metrics, store, usage_writer, token, client),
        usage_writer=usage_writer,
        client=client,
        languages=UserLanguages(settings.language, slack_locale(client), default=settings.channel_language),
        members=ChannelMembers(slack_members(client)),
        facts=facts,
        outage=outage,
    )


@dataclass
class _Daily:
    """The store's jobs: subscriptions, the PR of the day and its scheduler, the weekly report."""

    subscriptions: Subscriptions
    poster: DailyPoster
    scheduler: DailyScheduler
    today: Callable[[], Entry | None]
    curator: WeeklyReport | None
    curator_jobs: BackgroundScheduler | None


def _daily_parts(parts: _Parts, store: SqlStore) -> _Daily:
    """What runs on the store besides the answers (serve, or a test that passes a store)."""
    settings, library = parts.settings, parts.live.library
    # The jobs wait SLACK_TIMEOUT for Slack; every client shares the bot's rate limits.
    jobs = count_slack_calls(
        web_client(settings, settings.slack_bot_token, parts.rate_limits, daily=True), parts.metrics
    )
    subscriptions = build_subscriptions(settings, parts.live, store, parts.client, parts.members, jobs)
    poster = build_daily_poster(
        settings,
        library,
        store,
        parts.registry,
        subscriptions.topic_filter,
        jobs,
        facts=parts.facts,
        outage=parts.outage,
    )
    subscriptions.poster = poster
    curator = build_weekly_report(settings, library, store, parts.client, parts.metrics)
    return _Daily(
        subscriptions=subscriptions,
        poster=poster,
        scheduler=build_daily_scheduler(settings, poster, parts.usage, subscriptions),
        today=daily_today(settings, poster),
        curator=curator,
        curator_jobs=weekly_scheduler(curator, settings.curator_cron) if curator is not None else None,
    )


def _stop_jobs(daily: _Daily | None) -> None:
    """The install is gone (app_uninstalled, tokens_revoked): nothing more to post on a schedule."""
    if daily is None:
        return
    daily.scheduler.shutdown()
    if daily.curator_jobs is not None and daily.curator_jobs.running:
        daily.curator_jobs.shutdown(wait=False)


def _daily_fields(daily: _Daily | None) -> dict[str, Any]:
    """`Bot`'s fields for the store's jobs (none without a store)."""
    if daily is None:
        return {}
    return {
        "daily": daily.poster,
        "scheduler": daily.scheduler,
        "subscriptions": daily.subscriptions,
        "curator": daily.curator,
        "curator_jobs": daily.curator_jobs,
    }


def _answers(
    parts: _Parts,
    daily: _Daily | None,
    today: Callable[[], Entry | None] | None,
    page_size: int,
    answer_cache: int,
) -> ObservedAnswers:
    """The slash command's answers (search, latest, today, the channel's subscription commands)."""
    live = parts.live
    searches = parts.observed("command")
    return ObservedAnswers(
        index=searches,
        latest=live.latest,
        # The seam, else what the first daily channel gets today, else (no store) the newest entry.
        today=today or (daily.today if daily else live.newest),
        language=parts.languages.default,
        page_size=page_size,
        generation=lambda: live.generation,
        cache_size=answer_cache,
        channel_commands=daily.subscriptions.commands if daily else None,
        on_cached_search=searches.replay,
    )


def _handlers(
    parts: _Parts,
    answers: ObservedAnswers,
    answer_pool: TrackedExecutor,
    ack_budget: float,
    handled: HandledEvents | None,
    store: SqlStore | None,
    daily: _Daily | None,
) -> dict[str, Any]:
    """The listeners of every Slack surface, by `build_slack_app`'s argument names."""
    settings, live, library = parts.settings, parts.live, parts.live.library
    lang, languages = parts.languages.default, parts.languages
    handled_events = ObservedHandledEvents(handled or InMemoryHandledEvents(), parts.usage)
    shared = SharedThreads(parts.registry, parts.usage)
    members = parts.members
    dms = _direct_messages(parts, shared, handled_events, answers)
    shares: ReplayLedger = store or InMemoryReplayLedger()
    # The ack path's replay check answers within a deadline (a locked SQLite file waits 30 s);
    # a share, after the ack, waits for the store as before rather than fail on a short lock.
    replays = DeadlineLedger(store) if store is not None else shares
    return {
        "command": CommandHandler(
            answers,
            answer_pool,
            ack_budget=ack_budget,
            on_command=count_command(parts.usage),
            languages=languages,
        ),
        "buttons": ActionHandlers(
            answers,
            library.get,
            shared,
            lang,
            members,
            languages,
            dms.pick_channel,
            shares=shares,
            facts=parts.facts,
            outage=parts.outage,
        ),
        "replays": replays,
        "votes": FeedbackHandlers(parts.usage, lang),
        "links": LinkPreviews(
            live.entries, library.get, shared, handled_events, lang, members, facts=parts.facts
        ),
        "home": HomeTab(
            parts.observed("home"),
            answers.today,
            live.latest,
            library.get,
            home_channels(settings, daily.subscriptions if daily else None),
            lambda: live.generation,
            lambda: _local_day(settings),
            languages,
            members,
            facts=parts.facts,
        ),
        "dms": dms,
        "shortcut": MessageShortcut(live.entries, parts.observed("shortcut"), languages),
    }


def _direct_messages(
    parts: _Parts, shared: SharedThreads, handled: HandledEvents, answers: ObservedAnswers
) -> DirectMessages:
    """Topics sent to the bot in a DM, answered with the best entry's card."""
    library = parts.live.library
    return DirectMessages(
        parts.observed("dm"),
        library.get,
        shared,
        handled,
        parts.languages,
        parts.members,
        answers,
        facts=parts.facts,
        outage=parts.outage,
    )


def slack_credentials(settings: Settings, local: bool) -> tuple[str, str]:
    """The bot token and signing secret; the console (`local`) and Socket Mode do without a
    secret (one is generated), only the console without a token."""
    token = settings.slack_bot_token or (LOCAL_BOT_TOKEN if local else None)
    if token is None:
        raise SettingsError("setting SLACK_BOT_TOKEN: required to talk to Slack (xoxb-…)")
    secret = settings.slack_signing_secret
    if secret is None:
        if not (local or settings.slack_app_token):
            raise SettingsError(
                "setting SLACK_SIGNING_SECRET: required for HTTP mode (or set SLACK_APP_TOKEN)"
            )
        secret = secrets.token_hex(16)
    return token, secret


def build_usage(
    settings: Settings,
    metrics: Metrics,
    store: SqlStore | None,
    writer: TrackedExecutor,
    token: str,
    client: WebClient | None = None,
) -> UsageRecorder:
    """Usage rows go to the store's tables (none without a store), voters keyed by a salted hash,
    each with where it was made (`conversations.info` through `client`)."""
    return UsageRecorder(
        metrics,
        UsageStore(store.engine) if store is not None else None,
        writer=writer,
        voter_key=salt_key(settings.usage_salt, token),
        retention=settings.usage_retention,
        places=Places(conversation_kind(client) if client is not None else None),
    )


def build_weekly_report(
    settings: Settings, library: Library, store: SqlStore, client: WebClient, metrics: Metrics
) -> WeeklyReport | None:
    """The curator's weekly report to CURATOR_CHANNEL (None without one), once per week across
    replicas."""
    if not settings.curator_channel:
        return None

    def describe(entry_id: str) -> tuple[str, int | None]:
        entry = library.get(entry_id)
        return (entry.title, entry.pr) if entry else ("", None)

    def render(report: CuratorReport) -> SlackMessage:
        shown = render_curator_report(report, settings.channel_language)
        return SlackMessage(shown["text"], shown["blocks"])

    return WeeklyReport(
        UsageStore(store.engine),
        store.engine,
        client,
        settings.curator_channel,
        render,
        describe,
        settings.zone,
        on_result=lambda status: metrics.curator_reports.labels(status.replace(" ", "_")).inc(),
    )


def library_state(library: Library) -> LibraryState:
    """What /metrics reports of the digest: loads, entries, problems by severity."""
    errors = len(library.errors)
    return LibraryState(library.generation, len(library), errors, len(library.problems) - errors)


def count_command(usage: UsageRecorder) -> Callable[[Request], None]:
    return lambda request: usage.command(request.kind)


def build_follow_ups(
    settings: Settings,
    library: Library,
    index: Searchable,
    threads: ThreadRegistry,
    handled: HandledEvents | None,
    usage: UsageRecorder | None = None,
    languages: Callable[[str | None], Language] | None = None,
    *,
    warm: bool = True,
    facts: FactsLookup = no_facts,
    outage: OutageQueue | None = None,
) -> FollowUps:
    """Answers in the bot's threads and to mentions; `handled` (the SQL store in serve) makes
    each message answered once across retries, restarts and replicas. With `usage`, answers
    and turned-away deliveries are counted. Without `warm`, the answerer reads its data (the
    glossary, phrasings: a tenth of a second) on `answerer.warm_up()` or its first answer."""
    dedup: HandledEvents = handled or InMemoryHandledEvents()

    # The digest folder's glossary files extend the bundled glossary, as for the search.
    def glossary() -> Glossary:
        return load_glossary(library.folder)

    answerer = (
        Answerer(library, glossary, warm=warm, facts=facts)
        if usage is None
        else ObservedAnswerer(library, usage, glossary, warm=warm, facts=facts)
    )
    if usage is not None:
        dedup = ObservedHandledEvents(dedup, usage)
    return FollowUps(
        answerer,
        library.get,
        index,
        threads,
        dedup,
        settings.channel_language,
        mode=settings.followups,
        model=build_model_answers(settings, usage.metrics if usage is not None else None),
        languages=languages,
        outage=outage,
    )


def build_model_client(settings: Settings, metrics: Metrics | None = None) -> ModelClient | None:
    """The model server client when LLM_BASE_URL is set (the `openai` package loads only then);
    with `metrics`, its circuit breaker counts every call's outcome."""
    if not settings.llm_base_url:
        return None
    from chatbot.llm import ModelClient

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    breaker = CountedBreaker(metrics) if metrics is not None else None
    return ModelClient(
        settings.llm_base_url, settings.llm_model, key, timeout=settings.llm_timeout, breaker=breaker
    )


def build_model_answers(settings: Settings, metrics: Metrics | None = None) -> ModelAnswers | None:
    model = build_model_client(settings, metrics)
    return ModelAnswers(model, timeout=settings.llm_timeout) if model is not None else None


# -- GitHub's PR facts -----------------------------------------------------------------------


def github_client(settings: Settings) -> GitHubClient:
    """A client for GITHUB_API_URL, with GITHUB_TOKEN when set (else unauthenticated, said once)."""
    from chatbot.github import GitHubClient

    token = settings.github_token.get_secret_value() if settings.github_token else None
    return GitHubClient(settings.github_api_url, token)


def build_github_facts(
    settings: Settings, store: SqlStore, entries: Callable[[], Sequence[Entry]]
) -> GitHubFacts | None:
    """The facts every replica reads and one refreshes (the store decides), with GITHUB_* set."""
    if not settings.github_enabled:
        return None
    from chatbot.github import FactsRefresher, GitHubFacts
    from chatbot.store.prfacts import PrFactsStore

    facts_store = PrFactsStore(store.engine)
    refresher = FactsRefresher(github_client(settings), facts_store)
    return GitHubFacts(refresher, facts_store, entries, settings.github_refresh, process_owner())


def stored_facts(settings: Settings) -> FactsLookup:
    """The facts in the store for one command (`ask`, `today`, `list`); none without GITHUB_*
    settings (the command then does not open the store at all) or when the store has none."""
    if not settings.github_enabled:
        return no_facts
    from chatbot.github import load_facts
    from chatbot.store.prfacts import PrFactsStore

    store = build_store(settings)
    try:
        return facts_lookup(load_facts(PrFactsStore(store.engine)))
    finally:
        store.close()


# -- the PR of the day -----------------------------------------------------------------------


def build_store(settings: Settings) -> SqlStore:
    """The SQL store at DATABASE_URL, migrated to the newest schema."""
    return SqlStore.open(settings.database_url)


def daily_message(entry: Entry, lang: Language, facts: PrFacts | None = None) -> SlackMessage:
    """The entry card under a "PR of the day" header, with the hint to ask in the thread."""
    card = render_entry_card(entry, lang, header=Texts(lang)("today.header"), facts=facts)
    return SlackMessage(card["text"], card["blocks"])


def build_daily_poster(
    settings: Settings,
    library: Library,
    store: SqlStore,
    threads: ThreadRegistry | None = None,
    topics: Callable[[str], TopicFilter | None] | None = None,
    client: WebClient | None = None,
    *,
    facts: FactsLookup = no_facts,
    outage: OutageQueue | None = None,
) -> DailyPoster:
    """Posts to Slack once per channel and day; its client (the bot's jobs' client in serve) waits
    out Slack's rate limits and retries 5xx/connection errors, a post only when it never left.
    `facts`: GitHub's, shown on the card; reverted and unmerged PRs are passed over; a post's
    record the database cannot take is held in `outage` (serve)."""

    def entries() -> Sequence[Entry]:
        library.refresh()
        return library.entries

    return DailyPoster(
        store,
        entries,
        client or web_client(settings, settings.slack_bot_token, daily=True),
        lambda entry: daily_message(entry, settings.channel_language, facts(entry)),
        threads=threads or store,
        after_post=crash_after_post(),
        topics=topics or (lambda _channel: None),
        facts=facts,
        outage=outage,
    )


# Test hook (tests/daily): exit right after Slack accepted the daily post, before the store
# records it, as a process killed at the worst moment would.
CRASH_AFTER_POST_ENV = "VLLM_DIGEST_CRASH_AFTER_POST"
CRASH_EXIT_CODE = 75


def crash_after_post() -> Callable[[], None] | None:
    """The crash hook when VLLM_DIGEST_CRASH_AFTER_POST is set, else None."""
    if not os.environ.get(CRASH_AFTER_POST_ENV):
        return None
    return lambda: os._exit(CRASH_EXIT_CODE)


def build_daily_scheduler(
    settings: Settings,
    poster: DailyPoster,
    usage: UsageRecorder | None = None,
    subscriptions: Subscriptions | None = None,
) -> DailyScheduler:
    """Cron jobs for DAILY_CHANNELS and the subscriptions (re-read every RECONCILE_SECONDS, the
    announcer on the same tick); a DAILY_CRON APScheduler rejects fails like any bad setting."""
    run = observed_daily_run(poster.run, usage) if usage is not None else poster.run
    try:
        return DailyScheduler(
            run,
            settings.daily_channels,
            settings.daily_cron,
            settings.zone,
            settings.daily_grace,
            subscriptions=subscriptions.store.all if subscriptions else None,
            reconcile_every=settings.reconcile_seconds,
            after_reconcile=subscriptions.announcer.run if subscriptions else None,
        )
    except ValueError as exc:
        raise SettingsError(f"setting DAILY_CRON: {exc} (got {settings.daily_cron!r})") from None


def daily_today(settings: Settings, poster: DailyPoster) -> Callable[[], Entry | None]:
    """`/vllm-digest today`: what the first daily channel got (or gets) today."""
    channel = settings.daily_channels[0] if settings.daily_channels else "console"

    def today() -> Entry | None:
        return poster.entry_for_day(channel, _local_day(settings))

    return today


def _local_day(settings: Settings) -> dt.date:
    return dt.datetime.now(settings.zone).date()


# -- subscriptions ---------------------------------------------------------------------------


@dataclass
class Subscriptions:
    """The pieces of channel subscriptions: store, slash subcommands, the picker's topic filter,
    the new-digest announcer."""

    store: SubscriptionStore
    configured: list[Subscription]
    commands: SubscriptionCommands
    announcer: Announcer
    live: LiveIndex
    poster: DailyPoster | None = None

    def effective(self) -> list[Subscription]:
        return effective_subscriptions(self.configured, self.store.all())

    def entries_on(self, subscription: Subscription) -> frozenset[str]:
        return entries_on(subscription.topics, self.live.current())

    def pick_today(self, channel: str) -> tuple[Entry, Pick] | None:
        """A subscribed channel's entry for today (in its zone) and the pick's reason."""
        subscription = self.store.get(channel)
        if subscription is None or self.poster is None:
            return None
        day = dt.datetime.now(ZoneInfo(subscription.schedule.zone)).date()
        pick = self.poster.pick(channel, day)
        entry = self.poster.entry_for_day(channel, day)
        return (entry, pick) if entry is not None and pick is not None else None

    def topic_filter(self, channel: str) -> TopicFilter | None:
        """The channel's topics as the picker's filter; None for a channel on every topic."""
        subscription = self.store.get(channel)
        if subscription is None or not subscription.topics:
            return None
        return TopicFilter(
            self.entries_on(subscription), tuple(subscription.topic_labels()), subscription.strict
        )


def build_subscriptions(
    settings: Settings,
    live: LiveIndex,
    store: SqlStore,
    client: WebClient,
    members: ChannelMembers | None = None,
    jobs: WebClient | None = None,
) -> Subscriptions:
    """Subscriptions on the store's database; DAILY_CHANNELS/DAILY_CRON/TIMEZONE are the configured
    ones and the defaults of a new subscription. `jobs`: the announcer's client (default `client`)."""
    subscriptions = SubscriptionStore(store.engine)
    configured = configured_subscriptions(settings.daily_channels, settings.daily_cron, settings.timezone)
    schedule = default_schedule(settings.daily_cron, settings.timezone)

    def resolve(words: list[str]) -> Resolved:
        index = live.current()
        return resolve_topics(words, index.glossary, index)

    commands = SubscriptionCommands(
        store=subscriptions,
        configured=configured,
        defaults=lambda channel: Subscription(channel, schedule),
        resolve=resolve,
        client=client,
        language=settings.channel_language,
        admins=frozenset(settings.admin_users),
        pick_today=lambda channel: bundle.pick_today(channel),
        members=members or ChannelMembers(slack_members(client)),
    )

    def entries() -> Sequence[Entry]:
        live.current()
        return live.library.entries

    bundle: Subscriptions
    announcer = Announcer(
        subscriptions,
        entries,
        lambda: bundle.effective(),
        lambda subscription: bundle.entries_on(subscription),
        jobs or client,
        lambda new, subscription: announcement_message(new, subscription, settings.channel_language),
    )
    bundle = Subscriptions(subscriptions, configured, commands, announcer, live)
    return bundle


def home_channels(settings: Settings, subscriptions: Subscriptions | None) -> Callable[[], list[str]]:
    """The channels App Home lists: every subscription (DAILY_CHANNELS included), from the store
    when there is one."""
    if subscriptions is None:
        return lambda: list(settings.daily_channels)
    return lambda: [s.channel for s in subscriptions.effective()]


def announcement_message(
    entries: Sequence[Entry], subscription: Subscription, lang: Language
) -> SlackMessage:
    message = render_announcement(entries, subscription, lang)
    return SlackMessage(message["text"], message["blocks"])
