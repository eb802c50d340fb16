"""The one place that builds the object graph from settings: library, index, Slack app.

`build(settings)` returns a `Bot` holding every piece; nothing else reads settings. Tests and the
console pass replacements (an index wrapper, a `today` picker, a thread registry, a follow-up
handler) as keyword arguments; with a store (serve) the daily poster and its scheduler are
built too.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from slack_bolt import App

from chatbot.bot import Bot
from chatbot.builders import SharedParts, build_follow_ups, build_github_facts, build_semantic, shared_parts
from chatbot.daily.jobs import DailyJobs, bot_fields, daily_jobs, home_channels, local_day, stop_jobs
from chatbot.digest import Entry, Library
from chatbot.executors import TrackedExecutor
from chatbot.live import LiveIndex
from chatbot.observability import RequestIdMiddleware
from chatbot.settings import Settings, SettingsError
from chatbot.slack.app import build_slack_app
from chatbot.slack.fairness import FairExecutor
from chatbot.slack.handlers.actions import ActionHandlers
from chatbot.slack.handlers.command import Answers, CommandHandler, Searchable
from chatbot.slack.handlers.dm import DirectMessages
from chatbot.slack.handlers.feedback import FeedbackHandlers
from chatbot.slack.handlers.home import HomeTab
from chatbot.slack.handlers.install import InstallEvents
from chatbot.slack.handlers.links import LinkPreviews
from chatbot.slack.handlers.messages import FollowUpHandler
from chatbot.slack.handlers.shortcut import MessageShortcut
from chatbot.slack.ledger import LEDGER_DEADLINE, InMemoryLedger, Ledger, ReplayMiddleware
from chatbot.slack.loading import LoadingGate
from chatbot.snapshot import Snapshots
from chatbot.store import SqlStore, ThreadRegistry
from chatbot.usage.places import PlaceMiddleware

# A token the console and tests use when no SLACK_BOT_TOKEN is configured.
LOCAL_BOT_TOKEN = "xoxb-local-console"


def build(
    settings: Settings,
    *,
    local: bool = False,
    index: Callable[[LiveIndex], Searchable] | None = None,
    today: Callable[[], Entry | None] | None = None,
    threads: ThreadRegistry | None = None,
    follow_up: FollowUpHandler | None = None,
    handled: Ledger | None = None,
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
    semantic = build_semantic(settings, store)
    live = LiveIndex(Library(settings.digest_dir), snapshots=snapshots, load=load, semantic=semantic)
    github = build_github_facts(settings, store, live.entries) if store is not None else None
    parts = shared_parts(settings, token, live, index, threads, store, github)
    # The one "seen this request/message" ledger: the store's across replicas, else in memory.
    ledger: Ledger = handled or store or InMemoryLedger()
    follow_up, after_load = _follow_ups(parts, ledger, follow_up, load)
    daily = daily_jobs(parts, store) if store is not None else None
    answer_pool = TrackedExecutor(max_workers=16, thread_name_prefix="answer")
    listener_pool = FairExecutor(16, "listener", parts.rate_limits)
    answers = _answers(parts, daily, today, page_size, answer_cache)
    handlers = _handlers(parts, answers, answer_pool, ack_budget, ledger, store, daily)
    handlers["installs"] = installs = InstallEvents(lambda: stop_jobs(daily))
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
        outage=parts.outage,
        **bot_fields(daily),
    )


def _follow_ups(
    parts: SharedParts, ledger: Ledger, given: FollowUpHandler | None, load: bool
) -> tuple[FollowUpHandler, list[Callable[[], None]]]:
    """The follow-up handler (the one given, else built) and what to run once the digests are in:
    loading in the background (serve), the answerer reads its data then, not before ready."""
    if given is not None:
        return given, []
    follow_ups = build_follow_ups(
        parts.settings,
        parts.live.library,
        parts.searchable,
        parts.registry,
        ledger,
        parts.usage,
        parts.languages,
        warm=load,
        facts=parts.facts,
        outage=parts.outage,
    )
    return follow_ups, [] if load else [follow_ups.answerer.warm_up]


def _loading_gate(parts: SharedParts, listeners: Executor, follow_up: FollowUpHandler) -> LoadingGate:
    """ "Still loading" until the digests are in (thread replies wait for them), with no Slack call
    on its path: the language of a person already known, else the default."""
    languages = parts.languages
    return LoadingGate(
        parts.live.ready,
        parts.client,
        lambda user: languages.cached(user) or languages.default,
        listeners,
        follow_up=follow_up,
    )


def _slack_app(
    parts: SharedParts,
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
    app.use(RequestIdMiddleware(logging.getLogger("chatbot.slack.requests")))
    app.use(PlaceMiddleware())  # where each request was made: the report quotes only public text
    return app


def _answers(
    parts: SharedParts,
    daily: DailyJobs | None,
    today: Callable[[], Entry | None] | None,
    page_size: int,
    answer_cache: int,
) -> Answers:
    """The slash command's answers (search, latest, today, the channel's subscription commands)."""
    live = parts.live
    return Answers(
        index=parts.searchable,
        latest=live.latest,
        # The seam, else what the first daily channel gets today, else (no store) the newest entry.
        today=today or (daily.today if daily else live.newest),
        language=parts.languages.default,
        page_size=page_size,
        generation=lambda: live.generation,
        cache_size=answer_cache,
        channel_commands=daily.subscriptions.commands if daily else None,
        usage=parts.usage,
    )


def _handlers(
    parts: SharedParts,
    answers: Answers,
    answer_pool: TrackedExecutor,
    ack_budget: float,
    ledger: Ledger,
    store: SqlStore | None,
    daily: DailyJobs | None,
) -> dict[str, Any]:
    """The listeners of every Slack surface, by `build_slack_app`'s argument names."""
    settings, live, library = parts.settings, parts.live, parts.live.library
    lang, languages = parts.languages.default, parts.languages
    members, usage = parts.members, parts.usage
    dms = _direct_messages(parts, ledger, answers)
    # The ack path's replay check answers within a deadline (a locked SQLite file waits 30 s);
    # a share, after the ack, waits for the store as before rather than fail on a short lock.
    replays = ReplayMiddleware(ledger, LEDGER_DEADLINE if store is not None else None)
    return {
        "command": CommandHandler(answers, answer_pool, ack_budget=ack_budget, languages=languages),
        "buttons": ActionHandlers(
            answers,
            library.get,
            parts.registry,
            lang,
            members,
            languages,
            dms.pick_channel,
            shares=ledger,
            facts=parts.facts,
            outage=parts.outage,
            usage=usage,
        ),
        "replays": replays,
        "votes": FeedbackHandlers(parts.usage, lang),
        "links": LinkPreviews(
            live.entries, library.get, parts.registry, ledger, lang, members, facts=parts.facts, usage=usage
        ),
        "home": HomeTab(
            parts.searchable,
            answers.today,
            live.latest,
            library.get,
            home_channels(settings, daily.subscriptions if daily else None),
            lambda: live.generation,
            lambda: local_day(settings),
            languages,
            members,
            facts=parts.facts,
            usage=usage,
        ),
        "dms": dms,
        "shortcut": MessageShortcut(live.entries, parts.searchable, languages, usage),
    }


def _direct_messages(parts: SharedParts, ledger: Ledger, answers: Answers) -> DirectMessages:
    """Topics sent to the bot in a DM, answered with the best entry's card."""
    return DirectMessages(
        parts.searchable,
        parts.live.library.get,
        parts.registry,
        ledger,
        parts.languages,
        parts.members,
        answers,
        facts=parts.facts,
        outage=parts.outage,
        usage=parts.usage,
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
