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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from apscheduler.schedulers.background import BackgroundScheduler
from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)

from chatbot.answers import Answerer
from chatbot.daily import DailyPoster, DailyScheduler, SlackMessage, daily_web_client
from chatbot.digest import Entry, Library
from chatbot.observability import LibraryState, Metrics, count_slack_calls, request_id_middleware
from chatbot.observability.metrics import CountedBreaker
from chatbot.search import SearchIndex, SearchResult, load_glossary
from chatbot.settings import Settings, SettingsError
from chatbot.slack.app import build_slack_app
from chatbot.slack.blocks import render_entry_card
from chatbot.slack.curator import render_curator_report
from chatbot.slack.handlers.actions import ActionHandlers
from chatbot.slack.handlers.command import CommandHandler, Request, Searchable
from chatbot.slack.handlers.dm import DirectMessages
from chatbot.slack.handlers.feedback import FeedbackHandlers
from chatbot.slack.handlers.followups import FollowUps, HandledEvents, InMemoryHandledEvents
from chatbot.slack.handlers.home import HomeTab
from chatbot.slack.handlers.links import LinkPreviews
from chatbot.slack.handlers.messages import FollowUpHandler
from chatbot.slack.handlers.model_answers import ModelAnswers
from chatbot.slack.handlers.shortcut import MessageShortcut
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.locale import UserLanguages, slack_locale
from chatbot.slack.replays import InMemoryReplayLedger, ReplayLedger
from chatbot.store import InMemoryThreadRegistry, SqlStore, ThreadRegistry
from chatbot.usage import UsageStore, salt_key
from chatbot.usage.observed import (
    ObservedAnswerer,
    ObservedAnswers,
    ObservedHandledEvents,
    ObservedSearch,
    SharedThreads,
    observed_daily_run,
)
from chatbot.usage.recorder import UsageRecorder
from chatbot.usage.report import CuratorReport
from chatbot.usage.weekly import WeeklyReport, weekly_scheduler

if TYPE_CHECKING:
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

    Off the request path: a request at most starts a check (every `refresh_every` seconds) on a
    background thread and answers from the index it has; the reload (only changed files are
    parsed again) and the new index are built there and swapped in when ready. `generation` is
    the generation of the index being served, so answers cached under it match what was searched.
    """

    def __init__(self, library: Library, refresh_every: float = 2.0) -> None:
        self.library = library
        self.refresh_every = refresh_every
        self._newest_first: tuple[int, list[Entry]] = (-1, [])
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._reloading = False
        self._index = self._build()
        self._generation = library.generation
        self._checked = time.monotonic()

    def current(self) -> SearchIndex:
        """The index to answer from now; starts a background check when one is due."""
        if time.monotonic() - self._checked >= self.refresh_every:
            with self._lock:
                if not self._reloading and time.monotonic() - self._checked >= self.refresh_every:
                    self._reloading = True
                    threading.Thread(target=self._reload, name="digest-reload", daemon=True).start()
        return self._index

    def _reload(self) -> None:
        try:
            if self.library.refresh():
                generation = self.library.generation
                index = self._build()
                self._index, self._generation = index, generation
        except Exception:  # a reload must never take the bot down; the previous index stays
            log.exception("reloading the digest folder %s failed", self.library.folder)
        finally:
            with self._idle:
                self._reloading = False
                self._checked = time.monotonic()
                self._idle.notify_all()

    def wait_reloaded(self, timeout: float = 30.0) -> bool:
        """Check the folder now and wait until any reload has been swapped in (CLI, tests)."""
        with self._idle:
            self._checked = -float("inf")
        self.current()
        with self._idle:
            return self._idle.wait_for(lambda: not self._reloading, timeout)

    def _build(self) -> SearchIndex:
        for problem in self.library.problems:
            log.warning("%s", problem)
        glossary = load_glossary(self.library.folder)
        for problem in glossary.problems:
            log.warning("%s", problem)
        return SearchIndex.build(self.library.entries, glossary)

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
    executors: list[TrackedExecutor] = field(default_factory=list)
    store: SqlStore | None = None
    daily: DailyPoster | None = None
    scheduler: DailyScheduler | None = None
    metrics: Metrics = field(default_factory=Metrics)
    usage: UsageRecorder | None = None
    curator: WeeklyReport | None = None
    curator_jobs: BackgroundScheduler | None = None  # started by serve
    socket_connected: Callable[[], bool] | None = None  # Socket Mode: set once connected

    def health(self) -> dict[str, object]:
        """What /healthz reports besides readiness: the library is loaded."""
        return {"entries": len(self.library), "errors": len(self.library.errors)}

    def readiness(self) -> dict[str, str]:
        """Checks that must be "ok" for Slack traffic to be worth sending here: the store
        answers (threads, dedup and the daily post live there) and the socket is up."""
        checks: dict[str, str] = {}
        if self.store is not None:
            checks["store"] = self.store.ping()
        if self.socket_connected is not None:
            checks["socket_mode"] = "ok" if self.socket_connected() else "not connected"
        return checks

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """True once no answer or lazy listener is running (for the console's script mode)."""
        return all(executor.wait_idle(timeout) for executor in self.executors)

    def close(self, drain: float = 5.0) -> None:
        """Stop the scheduler, let running answers finish (up to `drain` seconds), then stop."""
        if self.scheduler is not None:
            self.scheduler.shutdown()
        if self.curator_jobs is not None and self.curator_jobs.running:
            self.curator_jobs.shutdown(wait=False)
        self.wait_idle(drain)
        for executor in self.executors:
            executor.shutdown(wait=False, cancel_futures=True)
        if self.store is not None:
            self.store.close()


def web_client(settings: Settings, token: str) -> WebClient:
    """A Web API client for SLACK_API_URL that retries rate limits and server/connection errors."""
    client = WebClient(token=token, base_url=settings.slack_api_url, timeout=10)
    client.retry_handlers = [
        ConnectionErrorRetryHandler(max_retry_count=2),
        RateLimitErrorRetryHandler(max_retry_count=2),
        ServerErrorRetryHandler(max_retry_count=2),
    ]
    return client


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
) -> Bot:
    """The bot's object graph. `local=True` (console) accepts missing Slack credentials and
    generates a signing secret; otherwise SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are required
    for HTTP mode (SLACK_APP_TOKEN replaces the secret in Socket Mode).

    `index` wraps the live index (tests inject slowness here); `today` is the PR-of-the-day seam.
    With a `store` (serve), threads are registered in it and the daily post and its scheduler
    are built (`Bot.scheduler.start()` runs it); `today` then answers the daily pick.
    """
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

    library = Library.load(settings.digest_dir)
    live = LiveIndex(library)
    searchable: Searchable = index(live) if index else live
    registry = threads or store or InMemoryThreadRegistry()
    metrics = Metrics()
    metrics.watch_library(lambda: library_state(library))
    usage_writer = TrackedExecutor(max_workers=1, thread_name_prefix="usage")
    usage = UsageRecorder(
        metrics,
        UsageStore(store.engine) if store is not None else None,
        writer=usage_writer,
        voter_key=salt_key(settings.usage_salt, token),
        retention=settings.usage_retention,
    )
    client = count_slack_calls(web_client(settings, token), metrics)
    languages = UserLanguages(settings.language, slack_locale(client), default=settings.channel_language)
    lang = languages.default
    handled_events = ObservedHandledEvents(handled or store or InMemoryHandledEvents(), usage)
    if follow_up is None:
        mentions = ObservedSearch(searchable, usage, "mention", lambda: live.generation)
        follow_up = build_follow_ups(
            settings, library, mentions, registry, handled or store, usage, languages
        )
    daily = build_daily_poster(settings, library, store, registry) if store is not None else None
    if daily is not None:
        count_slack_calls(daily.client, metrics)
    if today is None and daily is not None:
        today = daily_today(settings, daily)
    replays: ReplayLedger = store or InMemoryReplayLedger()
    answer_pool = TrackedExecutor(max_workers=16, thread_name_prefix="answer")
    listener_pool = TrackedExecutor(max_workers=16, thread_name_prefix="listener")
    curator = None
    if store is not None and settings.curator_channel:
        curator = build_weekly_report(settings, library, store, client, metrics)
    searches = ObservedSearch(searchable, usage, "command", lambda: live.generation)
    answers = ObservedAnswers(
        index=searches,
        latest=live.latest,
        today=today or live.newest,
        language=lang,
        page_size=page_size,
        generation=lambda: live.generation,
        cache_size=answer_cache,
        on_cached_search=searches.replay,
    )

    def observed(source: str) -> ObservedSearch:
        return ObservedSearch(searchable, usage, source, lambda: live.generation)

    shared = SharedThreads(registry, usage)
    dms = DirectMessages(observed("dm"), library.get, shared, handled_events, languages, answers)
    app = build_slack_app(
        client=client,
        signing_secret=secret,
        command=CommandHandler(
            answers, answer_pool, ack_budget=ack_budget, on_command=count_command(usage), languages=languages
        ),
        buttons=ActionHandlers(
            answers, library.get, shared, lang, languages, dms.pick_channel, shares=replays
        ),
        follow_up=follow_up,
        listener_executor=listener_pool,
        replays=replays,
        votes=FeedbackHandlers(usage, lang),
        links=LinkPreviews(live.entries, library.get, shared, handled_events, lang),
        home=HomeTab(
            observed("home"),
            answers.today,
            live.latest,
            library.get,
            lambda: settings.daily_channels,
            lambda: live.generation,
            lambda: _local_day(settings),
            languages,
        ),
        dms=dms,
        shortcut=MessageShortcut(live.entries, observed("shortcut"), languages),
    )
    app.use(request_id_middleware(logging.getLogger("chatbot.slack.requests")))
    return Bot(
        settings=settings,
        library=library,
        index=searchable,
        live=live,
        threads=registry,
        client=client,
        app=app,
        signing_secret=secret,
        follow_up=follow_up,
        executors=[answer_pool, listener_pool, usage_writer],
        store=store,
        daily=daily,
        scheduler=build_daily_scheduler(settings, daily, usage) if daily is not None else None,
        metrics=metrics,
        usage=usage,
        curator=curator,
        curator_jobs=weekly_scheduler(curator, settings.curator_cron) if curator is not None else None,
    )


def build_weekly_report(
    settings: Settings, library: Library, store: SqlStore, client: WebClient, metrics: Metrics
) -> WeeklyReport:
    """The curator's weekly report to CURATOR_CHANNEL, once per week across replicas."""
    assert settings.curator_channel is not None

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
) -> FollowUps:
    """Answers in the bot's threads and to mentions; `handled` (the SQL store in serve) makes
    each message answered once across retries, restarts and replicas. With `usage`, answers
    and turned-away deliveries are counted."""
    dedup: HandledEvents = handled or InMemoryHandledEvents()
    answerer = Answerer(library)
    if usage is not None:
        dedup = ObservedHandledEvents(dedup, usage)
        answerer = ObservedAnswerer(library, usage)
    return FollowUps(
        answerer,
        library.get,
        index,
        threads,
        dedup,
        settings.channel_language,
        model=build_model_answers(settings, usage.metrics if usage is not None else None),
        languages=languages,
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


# -- the PR of the day -----------------------------------------------------------------------


def build_store(settings: Settings) -> SqlStore:
    """The SQL store at DATABASE_URL, migrated to the newest schema."""
    return SqlStore.open(settings.database_url)


def daily_message(entry: Entry, lang: Language) -> SlackMessage:
    """The entry card under a "PR of the day" header, with the hint to ask in the thread."""
    card = render_entry_card(entry, lang, header=Texts(lang)("today.header"))
    return SlackMessage(card["text"], card["blocks"])


def build_daily_poster(
    settings: Settings, library: Library, store: SqlStore, threads: ThreadRegistry | None = None
) -> DailyPoster:
    """Posts to Slack once per channel and day; its client retries 429/5xx/connection errors."""

    def entries() -> Sequence[Entry]:
        library.refresh()
        return library.entries

    return DailyPoster(
        store,
        entries,
        daily_web_client(settings.slack_bot_token, settings.slack_api_url, timeout=settings.slack_timeout),
        lambda entry: daily_message(entry, settings.channel_language),
        threads=threads or store,
        after_post=crash_after_post(),
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
    settings: Settings, poster: DailyPoster, usage: UsageRecorder | None = None
) -> DailyScheduler:
    """Cron jobs for DAILY_CHANNELS; a DAILY_CRON APScheduler rejects fails like any bad setting."""
    run = observed_daily_run(poster.run, usage) if usage is not None else poster.run
    try:
        return DailyScheduler(
            run, settings.daily_channels, settings.daily_cron, settings.zone, settings.daily_grace
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
