"""Prometheus metrics of one bot: counters and histograms in a registry the wiring owns.

Every metric lives in `Metrics.registry`, never in prometheus-client's global default registry:
two bots in one process (tests, a benchmark next to its baseline) keep separate counts, and a
replica's numbers are its own. Label values come from our code or Slack's bounded vocabularies
(command kinds, intents, API methods, error codes), never from what people type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

PREFIX = "vllm_digest"
# Searches and answers are milliseconds; the upper buckets catch a library rebuild on the path.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass(frozen=True)
class LibraryState:
    """What a scrape reads from the digest library: generation (1 + reloads), entries, problems."""

    generation: int
    entries: int
    errors: int
    warnings: int


class LibraryCollector(Collector):
    """Reads the library at scrape time, so reloads and problems need no hook in the library."""

    def __init__(self, state: Callable[[], LibraryState]) -> None:
        self.state = state

    def collect(self) -> Iterator[Metric]:
        now = self.state()
        reloads = CounterMetricFamily(
            f"{PREFIX}_digest_reloads", "Times the digest folder was (re)loaded after a change"
        )
        reloads.add_metric([], max(now.generation - 1, 0))
        yield reloads
        entries = GaugeMetricFamily(f"{PREFIX}_digest_entries", "Entries in the loaded digest library")
        entries.add_metric([], now.entries)
        yield entries
        problems = GaugeMetricFamily(
            f"{PREFIX}_digest_problems", "Problems in the digest files", labels=["severity"]
        )
        problems.add_metric(["error"], now.errors)
        problems.add_metric(["warning"], now.warnings)
        yield problems


class Children:
    """A labelled metric's children, each looked up in prometheus-client once: its `labels()`
    checks the values and takes the metric's lock on every call, twice per slash command. A
    child stays the metric's until `remove()`/`clear()`, which this project never calls."""

    def __init__(self, metric: Counter) -> None:
        self.metric = metric
        self._children: dict[tuple[str, ...], Counter] = {}

    def __call__(self, *values: str) -> Counter:
        child = self._children.get(values)
        if child is None:  # two threads may both look it up: labels() gives both the same child
            child = self._children[values] = self.metric.labels(*values)
        return child


@dataclass
class Metrics:
    """The bot's metrics. Build one per bot (`Metrics()`), hand it to whoever counts."""

    registry: CollectorRegistry = field(default_factory=lambda: CollectorRegistry(auto_describe=True))

    def __post_init__(self) -> None:
        counter, r = self._counter, self.registry
        self.commands = counter("commands", "Slash commands by kind (search, help, today, …)", "kind")
        self.commands_by_kind = Children(self.commands)
        self.searches = counter(
            "searches",
            "Topic searches (slash command and mentions) by whether anything matched",
            "source",
            "outcome",
        )
        self.searches_by = Children(self.searches)
        self.search_seconds = Histogram(
            f"{PREFIX}_search_seconds", "Time to search the index", buckets=LATENCY_BUCKETS, registry=r
        )
        self.answers = counter(
            "followup_answers", "Follow-up answers by intent and whether the note had it", "intent", "outcome"
        )
        self.answer_seconds = Histogram(
            f"{PREFIX}_answer_seconds", "Time to answer a follow-up", buckets=LATENCY_BUCKETS, registry=r
        )
        self.daily_posts = counter(
            "daily_posts", "PR-of-the-day runs by outcome (posted, recovered, failed, refused, …)", "status"
        )
        self.slack_calls = counter(
            "slack_api_calls",
            "Slack Web API requests (each attempt) by method and error (ok when none)",
            "method",
            "error",
        )
        self.events_deduplicated = counter(
            "events_deduplicated",
            "Event deliveries dropped as already handled (Slack retries, message + app_mention)",
            "by",
        )
        self.feedback = counter(
            "feedback",
            "Feedback presses by what was rated, the vote, and whether it was new or changed a vote",
            "kind",
            "vote",
            "outcome",
        )
        self.model_calls = counter(
            "model_calls",
            "Calls to the optional model server (LLM_BASE_URL) by outcome (ok, failed, circuit_open)",
            "outcome",
        )
        self.curator_reports = counter("curator_reports", "Weekly curator report runs by outcome", "status")

    def _counter(self, name: str, documentation: str, *labels: str) -> Counter:
        """A labelled counter `vllm_digest_<name>` in this bot's registry."""
        return Counter(f"{PREFIX}_{name}", documentation, labels, registry=self.registry)

    def watch_library(self, state: Callable[[], LibraryState]) -> None:
        """Report the library's reloads and problems at every scrape."""
        self.registry.register(LibraryCollector(state))

    def exposition(self) -> tuple[bytes, str]:
        """The text format Prometheus scrapes, with its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def value(self, name: str, labels: dict[str, str] | None = None) -> float:
        """One sample's value (0 when absent): for the CLI and tests reading counts back."""
        found = self.registry.get_sample_value(name, labels or {})
        return found if found is not None else 0.0


def samples(text: str) -> Iterable[tuple[str, dict[str, str], float]]:
    """Parse an exposition back into (name, labels, value): what a scraper sees."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, dict(sample.labels), float(sample.value)
