"""The adapters built from settings: the store, the model server, GitHub's PR facts, usage and the
curator's weekly report, the follow-up answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from slack_sdk import WebClient

from chatbot.answers import Answerer
from chatbot.daily.poster import process_owner
from chatbot.digest import Entry, FactsLookup, Library, no_facts
from chatbot.executors import TrackedExecutor
from chatbot.live import LiveIndex
from chatbot.observability import LibraryState, Metrics, count_slack_calls
from chatbot.search import load_glossary
from chatbot.search.semantic import SemanticIndex
from chatbot.settings import Settings
from chatbot.slack.curator import render_curator_report
from chatbot.slack.handlers.command import Searchable
from chatbot.slack.handlers.followups import FollowUps
from chatbot.slack.handlers.model_answers import ModelAnswers
from chatbot.slack.i18n import Language
from chatbot.slack.ledger import Ledger
from chatbot.slack.locale import UserLanguages, slack_locale
from chatbot.slack.membership import ChannelMembers, slack_members
from chatbot.slack.ratelimits import RateLimits
from chatbot.slack.retries import web_client
from chatbot.slack.webapi import SlackMessage
from chatbot.store import (
    InMemoryThreadRegistry,
    OutageQueue,
    RememberedThreads,
    SqlStore,
    ThreadRegistry,
)
from chatbot.usage import UsageStore, salt_key
from chatbot.usage.places import Places, conversation_kind
from chatbot.usage.recorder import UsageRecorder
from chatbot.usage.report import CuratorReport
from chatbot.usage.weekly import WeeklyReport

if TYPE_CHECKING:
    from chatbot.github import GitHubClient, GitHubFacts
    from chatbot.llm import ModelClient


def build_store(settings: Settings) -> SqlStore:
    """The SQL store at DATABASE_URL, migrated to the newest schema."""
    return SqlStore.open(settings.database_url)


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


def build_follow_ups(
    settings: Settings,
    library: Library,
    index: Searchable,
    threads: ThreadRegistry,
    handled: Ledger,
    usage: UsageRecorder | None = None,
    languages: Callable[[str | None], Language] | None = None,
    *,
    warm: bool = True,
    facts: FactsLookup = no_facts,
    outage: OutageQueue | None = None,
) -> FollowUps:
    """Answers in the bot's threads and to mentions; `handled` (the SQL store in serve) makes
    each message answered once across retries, restarts and replicas. With `usage`, searches,
    answers and turned-away deliveries are counted. Without `warm`, the answerer reads its data
    (the glossary, phrasings: a tenth of a second) on `answerer.warm_up()` or its first answer."""

    model = build_model_client(settings, usage.metrics if usage is not None else None)
    # The digest folder's glossary files extend the bundled glossary, as for the search.
    return FollowUps(
        Answerer(library, lambda: load_glossary(library.folder), warm=warm, facts=facts),
        library.get,
        index,
        threads,
        handled,
        settings.channel_language,
        mode=settings.followups,
        model=ModelAnswers(model, timeout=settings.llm_timeout) if model is not None else None,
        languages=languages,
        outage=outage,
        usage=usage,
    )


def build_model_client(settings: Settings, metrics: Metrics | None = None) -> ModelClient | None:
    """The model server client when LLM_BASE_URL is set (the `openai` package loads only then);
    with `metrics`, its circuit breaker counts every call's outcome."""
    if not settings.llm_base_url:
        return None
    from chatbot.llm import CircuitBreaker, ModelClient

    key = settings.secret("llm_api_key")
    breaker = None
    if metrics is not None:
        calls = metrics.model_calls
        breaker = CircuitBreaker(on_outcome=lambda outcome: calls.labels(outcome).inc())
    return ModelClient(
        settings.llm_base_url, settings.llm_model, key, timeout=settings.llm_timeout, breaker=breaker
    )


def build_semantic(settings: Settings, store: SqlStore | None) -> SemanticIndex | None:
    """Semantic search when EMBEDDINGS_MODEL is set: the server's embeddings, vectors kept in the
    store (when there is one) by entry content hash."""
    if not settings.embeddings_model or not settings.llm_base_url:
        return None
    from chatbot.llm import EmbeddingsClient
    from chatbot.store import VectorStore

    key = settings.secret("llm_api_key")
    client = EmbeddingsClient(
        settings.llm_base_url, settings.embeddings_model, key, timeout=settings.embeddings_timeout
    )
    cache = VectorStore(store.engine) if store is not None else None
    return SemanticIndex(client, cache, floor=settings.embeddings_floor)


def github_client(settings: Settings) -> GitHubClient:
    """A client for GITHUB_API_URL, with GITHUB_TOKEN when set (else unauthenticated, said once)."""
    from chatbot.github import GitHubClient

    return GitHubClient(settings.github_api_url, settings.secret("github_token"))


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


@dataclass
class SharedParts:
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


def shared_parts(
    settings: Settings,
    token: str,
    live: LiveIndex,
    index: Callable[[LiveIndex], Searchable] | None,
    threads: ThreadRegistry | None,
    store: SqlStore | None,
    github: GitHubFacts | None = None,
) -> SharedParts:
    """The digests as searched, the Slack client, metrics and usage recording; with a store, the
    queue that holds work through a database outage."""
    metrics = Metrics()
    library = live.library  # /metrics: loads, entries, problems by severity
    metrics.watch_library(
        lambda: LibraryState(
            library.generation, len(library), len(library.errors), len(library.problems) - len(library.errors)
        )
    )
    usage_writer = TrackedExecutor(max_workers=1, thread_name_prefix="usage")
    rate_limits = RateLimits()
    client = count_slack_calls(web_client(settings, token, rate_limits), metrics)
    outage = OutageQueue() if store is not None else None
    return SharedParts(
        rate_limits=rate_limits,
        settings=settings,
        live=live,
        searchable=index(live) if index else live,
        # Known threads are routed without the database; a registration it cannot take is held.
        registry=RememberedThreads(threads or store or InMemoryThreadRegistry(), outage),
        metrics=metrics,
        # Usage rows in the store (none without one), voters by a salted hash, each with where it
        # was made (`conversations.info`).
        usage=UsageRecorder(
            metrics,
            UsageStore(store.engine) if store is not None else None,
            writer=usage_writer,
            voter_key=salt_key(settings.usage_salt, token),
            retention=settings.usage_retention,
            places=Places(conversation_kind(client)),
        ),
        usage_writer=usage_writer,
        client=client,
        languages=UserLanguages(settings.language, slack_locale(client), default=settings.channel_language),
        members=ChannelMembers(slack_members(client)),
        facts=github.lookup if github else no_facts,
        outage=outage,
    )
