"""The daily jobs as serve runs them, built from settings: the PR of the day (poster, scheduler)
and the channel subscriptions (store, slash subcommands, topic filter, new-digest announcer)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.schedulers.background import BackgroundScheduler
from slack_sdk import WebClient

from chatbot.builders import (
    SharedParts,
    build_weekly_report,
)
from chatbot.daily import Pick, TopicFilter
from chatbot.daily.announcer import Announcer
from chatbot.daily.poster import DailyPoster, DailyResult, Status
from chatbot.daily.scheduler import DailyScheduler
from chatbot.daily.subscription import (
    Subscription,
    configured_subscriptions,
    default_schedule,
    effective_subscriptions,
)
from chatbot.daily.topics import Resolved, entries_on, resolve_topics
from chatbot.digest import Entry, FactsLookup, Library, PrFacts, no_facts
from chatbot.live import LiveIndex
from chatbot.observability import count_slack_calls
from chatbot.settings import Settings, SettingsError
from chatbot.slack.blocks import render_entry_card
from chatbot.slack.handlers.subscriptions import SubscriptionCommands
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.membership import ChannelMembers, slack_members
from chatbot.slack.retries import web_client
from chatbot.slack.subscription_blocks import render_announcement
from chatbot.slack.webapi import SlackMessage
from chatbot.store import (
    OutageQueue,
    SqlStore,
    SubscriptionStore,
    ThreadRegistry,
)
from chatbot.usage.recorder import UsageRecorder
from chatbot.usage.weekly import WeeklyReport, weekly_scheduler


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
    after_post: Callable[[], None] | None = None,
) -> DailyPoster:
    """Posts to Slack once per channel and day; its client (the bot's jobs' client in serve) waits
    out Slack's rate limits and retries 5xx/connection errors, a post only when it never left.
    `facts`: GitHub's, shown on the card; reverted and unmerged PRs are passed over; a post's
    record the database cannot take is held in `outage` (serve). `after_post` runs once Slack
    accepted a post, before it is recorded (tests crash there)."""

    def entries() -> Sequence[Entry]:
        library.refresh()
        return library.entries

    return DailyPoster(
        store,
        entries,
        client or web_client(settings, settings.slack_bot_token, daily=True),
        lambda entry: daily_message(entry, settings.channel_language, facts(entry)),
        threads=threads or store,
        after_post=after_post,
        topics=topics or (lambda _channel: None),
        facts=facts,
        outage=outage,
    )


def counted_daily_run(
    run: Callable[[str, dt.date], DailyResult], usage: UsageRecorder
) -> Callable[[str, dt.date], DailyResult]:
    """The daily poster's run, counting each outcome (posted, recovered, failed, …)."""

    def counted(channel: str, day: dt.date) -> DailyResult:
        try:
            result = run(channel, day)
        except Exception:
            usage.daily("error")
            raise
        usage.daily(result.status.value.replace(" ", "_"))
        if result.status in (Status.POSTED, Status.RECOVERED) and result.entry_id:
            usage.posted(result.entry_id)
        return result

    return counted


def build_daily_scheduler(
    settings: Settings,
    poster: DailyPoster,
    usage: UsageRecorder | None = None,
    subscriptions: Subscriptions | None = None,
) -> DailyScheduler:
    """Cron jobs for DAILY_CHANNELS and the subscriptions (re-read every RECONCILE_SECONDS, the
    announcer on the same tick); a DAILY_CRON APScheduler rejects fails like any bad setting."""
    run = counted_daily_run(poster.run, usage) if usage is not None else poster.run
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
        return poster.entry_for_day(channel, local_day(settings))

    return today


def local_day(settings: Settings) -> dt.date:
    return dt.datetime.now(settings.zone).date()


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


@dataclass
class DailyJobs:
    """The store's jobs: subscriptions, the PR of the day and its scheduler, the weekly report."""

    subscriptions: Subscriptions
    poster: DailyPoster
    scheduler: DailyScheduler
    today: Callable[[], Entry | None]
    curator: WeeklyReport | None
    curator_jobs: BackgroundScheduler | None


def daily_jobs(parts: SharedParts, store: SqlStore) -> DailyJobs:
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
    return DailyJobs(
        subscriptions=subscriptions,
        poster=poster,
        scheduler=build_daily_scheduler(settings, poster, parts.usage, subscriptions),
        today=daily_today(settings, poster),
        curator=curator,
        curator_jobs=weekly_scheduler(curator, settings.curator_cron) if curator is not None else None,
    )


def stop_jobs(daily: DailyJobs | None) -> None:
    """The install is gone (app_uninstalled, tokens_revoked): nothing more to post on a schedule."""
    if daily is None:
        return
    daily.scheduler.shutdown()
    if daily.curator_jobs is not None and daily.curator_jobs.running:
        daily.curator_jobs.shutdown(wait=False)


def bot_fields(daily: DailyJobs | None) -> dict[str, Any]:
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
