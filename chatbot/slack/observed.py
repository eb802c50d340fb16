"""The bot's parts as the wiring hands them out, each reporting what it did to the recorder.

Wrappers, not edits: the search index, the slash command's answers (whose cache would hide a
repeated search), the answerer, the dedup store and the thread registry keep their behaviour;
each wrapper adds one call to `UsageRecorder`. The wiring builds them (`chatbot.wiring`).
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from chatbot.answers import Answer, Answerer
from chatbot.daily.poster import DailyResult, Status
from chatbot.digest import Entry, FactsLookup, Library, no_facts
from chatbot.search import Glossary, SearchResult
from chatbot.slack import blocks
from chatbot.slack.handlers.command import Answers, Request, Searchable
from chatbot.slack.handlers.followups import HandledEvents
from chatbot.slack.i18n import Language
from chatbot.store import ThreadRegistry
from chatbot.usage.recorder import UsageRecorder

MEMO_SIZE = 2048


class ObservedSearch:
    """A Searchable that records every first-page search (with its result count and the entries
    it showed) and keeps that summary, so a search answered from the answer cache is recorded
    the same way (`replay`)."""

    def __init__(
        self,
        inner: Searchable,
        recorder: UsageRecorder,
        source: str,
        generation: Callable[[], int] = lambda: 0,
    ) -> None:
        self.inner = inner
        self.recorder = recorder
        self.source = source
        self.generation = generation
        self._memo: OrderedDict[tuple[int, str], tuple[int, list[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        started = time.perf_counter()
        result = self.inner.search(query, limit=limit, offset=offset)
        self.recorder.search_latency(time.perf_counter() - started)
        if offset == 0:
            summary = (result.total, [hit.entry.id for hit in result.hits])
            with self._lock:
                self._memo[(self.generation(), query)] = summary
                while len(self._memo) > MEMO_SIZE:
                    self._memo.popitem(last=False)
            self.recorder.search(self.source, query, *summary)
        return result

    def replay(self, query: str) -> None:
        """Record a search whose answer came from a cache."""
        with self._lock:
            summary = self._memo.get((self.generation(), query))
        if summary is None:  # evicted: search again (rare; the cache is smaller than the memo)
            self.search(query)
            return
        self.recorder.search(self.source, query, *summary)

    def topics(self) -> list[tuple[str, int]]:
        return self.inner.topics()


@dataclass
class ObservedAnswers(Answers):
    """The slash command's answers; a search served from the cache is still a search."""

    on_cached_search: Callable[[str], None] | None = None

    def cached(
        self, request: Request, offset: int = 0, lang: Language | None = None
    ) -> blocks.Message | None:
        answer = super().cached(request, offset, lang)
        if answer is not None and request.kind == "search" and offset == 0 and self.on_cached_search:
            self.on_cached_search(request.query)
        return answer


class ObservedAnswerer(Answerer):
    """The follow-up answerer, timing each answer and recording its intent and whether the note
    had it (the question itself is kept only when it did not)."""

    def __init__(
        self,
        library: Library,
        recorder: UsageRecorder,
        glossary: Glossary | Callable[[], Glossary] | None = None,
        *,
        warm: bool = True,
        facts: FactsLookup = no_facts,
    ) -> None:
        super().__init__(library, glossary, warm=warm, facts=facts)
        self.recorder = recorder

    def answer(self, entry: Entry, question: str) -> Answer:
        started = time.perf_counter()
        answer = super().answer(entry, question)
        self.recorder.answer(entry.id, answer.intent, answer.found, question, time.perf_counter() - started)
        return answer


class ObservedHandledEvents:
    """HandledEvents counting the deliveries it turns away (Slack retries, double deliveries)."""

    def __init__(self, inner: HandledEvents, recorder: UsageRecorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def mark_message_handled(self, channel: str, message_ts: str) -> bool:
        first = self.inner.mark_message_handled(channel, message_ts)
        if not first:
            self.recorder.deduplicated("message")
        return first

    def prune_handled_events(self, older_than: dt.datetime) -> int:
        return self.inner.prune_handled_events(older_than)


class SharedThreads:
    """The thread registry as Share to channel uses it: each registration is a share."""

    def __init__(self, inner: ThreadRegistry, recorder: UsageRecorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def register(self, channel: str, thread_ts: str, entry_id: str) -> None:
        self.inner.register(channel, thread_ts, entry_id)
        self.recorder.shared(entry_id)

    def entry_for(self, channel: str, thread_ts: str) -> str | None:
        return self.inner.entry_for(channel, thread_ts)


def observed_daily_run(
    run: Callable[[str, dt.date], DailyResult], recorder: UsageRecorder
) -> Callable[[str, dt.date], DailyResult]:
    """The daily poster's run, counting each outcome (posted, recovered, failed, …)."""

    def observed(channel: str, day: dt.date) -> DailyResult:
        try:
            result = run(channel, day)
        except Exception:
            recorder.daily("error")
            raise
        recorder.daily(result.status.value.replace(" ", "_"))
        if result.status in (Status.POSTED, Status.RECOVERED) and result.entry_id:
            recorder.posted(result.entry_id)
        return result

    return observed
