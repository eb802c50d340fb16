"""The `/vllm-digest` slash command: grammar, then an answer inside Slack's 3 seconds.

The answer is computed on a worker thread. When it is ready within `ack_budget` seconds it goes
back in the acknowledgement itself (one round trip, nothing else to fail); otherwise the command
is acknowledged with a "searching…" line and the answer follows through the response URL. Either
way the HTTP response to Slack leaves well inside 3 s, whatever the search costs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import orjson
from slack_bolt import BoltResponse

from chatbot.digest import Entry
from chatbot.search import SearchResult
from chatbot.slack import blocks
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.locale import UserLanguages
from chatbot.text import nfkc, typed_text
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

SUBCOMMANDS = ("help", "today", "topics", "latest")
# Subcommands that take words and act on the channel (chatbot.slack.handlers.subscriptions).
CHANNEL_SUBCOMMANDS = ("subscribe", "unsubscribe", "subscriptions")
# Answers that change with the day or the channel: never cached.
UNCACHED = frozenset({"today", *CHANNEL_SUBCOMMANDS})


class ChannelCommands(Protocol):
    """Subcommands about the channel the command was typed in (subscriptions)."""

    def handle(self, kind: str, words: str, channel: str, user: str) -> blocks.Message: ...

    def today(self, channel: str) -> blocks.Message | None:
        """The channel's own PR of the day when it has a subscription; None: the default answer."""
        ...


class Searchable(Protocol):
    """What the Slack adapter needs of the search index (chatbot.search.SearchIndex has it)."""

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult: ...

    def topics(self) -> list[tuple[str, int]]: ...


def search_counted(
    index: Searchable, usage: UsageRecorder | None, source: str, query: str, limit: int, offset: int = 0
) -> SearchResult:
    """A person's search on a surface (`command`, `dm`, `home`, …): the index's result; with
    `usage`, its latency, and for a first page the search and the entries it showed."""
    started = time.perf_counter()
    result = index.search(query, limit=limit, offset=offset)
    if usage is not None:
        usage.search_latency(time.perf_counter() - started)
        if offset == 0:
            usage.search(source, query, result.total, [hit.entry.id for hit in result.hits])
    return result


# What a first-page search showed (its total, the entries' ids), kept with a cached answer so a
# search answered from the cache is recorded as the search it stands for.
Shown = tuple[int, list[str]]


@dataclass(frozen=True)
class Request:
    """A parsed command: one of SUBCOMMANDS or CHANNEL_SUBCOMMANDS, or "search" with the topic query."""

    kind: str
    query: str = ""
    channel: str = ""
    user: str = ""


def parse(text: str) -> Request:
    """Empty or `help` → help; `today`, `topics`, `latest`; anything else is a topic query.
    A subcommand is known in any case and width (`HELP`, full-width `ｈｅｌｐ`), as a topic is."""
    words = text.split()
    if not words:
        return Request("help")
    first = nfkc(words[0]).casefold()
    if len(words) == 1 and first in SUBCOMMANDS:
        return Request(first)
    if first in CHANNEL_SUBCOMMANDS:
        return Request(first, " ".join(words[1:]))
    return Request("search", " ".join(words))


@dataclass
class Answers:
    """Builds the answer message for a parsed command (no Slack I/O: testable on its own).

    Answers other than `today` depend only on the library, so they are kept in a small LRU
    keyed by the library generation: a repeated topic costs a dict lookup, not a search. With
    `usage`, each first-page search is recorded, cached or not.
    """

    index: Searchable
    latest: Callable[[int], Sequence[Entry]]
    today: Callable[[], Entry | None]
    language: Language
    page_size: int = 5
    generation: Callable[[], int] = lambda: 0
    cache_size: int = 512
    channel_commands: ChannelCommands | None = None
    usage: UsageRecorder | None = None
    _cache: OrderedDict[tuple[int, str, str, int, str], tuple[blocks.Message, Shown | None]] = field(
        default_factory=OrderedDict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cached(
        self, request: Request, offset: int = 0, lang: Language | None = None
    ) -> blocks.Message | None:
        """The answer if it is at hand (never for `today` or the channel subcommands)."""
        if request.kind in UNCACHED or not self.cache_size:
            return None
        key = (self.generation(), request.kind, request.query, offset, lang or self.language)
        with self._lock:
            kept = self._cache.get(key)
            if kept is None:
                return None
            self._cache.move_to_end(key)
        answer, shown = kept
        if shown is not None and self.usage is not None:  # a search answered from the cache
            self.usage.search("command", request.query, *shown)
        return answer

    def _keep(
        self,
        request: Request,
        offset: int,
        answer: blocks.Message,
        lang: Language | None = None,
        shown: Shown | None = None,
    ) -> blocks.Message:
        if request.kind not in UNCACHED and self.cache_size:
            key = (self.generation(), request.kind, request.query, offset, lang or self.language)
            with self._lock:
                self._cache[key] = (answer, shown)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return answer

    def answer(
        self, request: Request, lang: Language | None = None, *, looked_up: bool = False
    ) -> blocks.Message:
        """The answer in `lang` (default: the configured language); `looked_up`: the caller
        found it missing from the cache just now (`cached`), so it is not looked up again."""
        lang = lang or self.language
        if request.kind == "search":
            return self.page(request.query, 0, lang, looked_up=looked_up)
        return self._keep(request, 0, self._answer(request, lang), lang)

    def _answer(self, request: Request, lang: Language) -> blocks.Message:
        if request.kind == "help":
            return blocks.render_help(lang)
        if request.kind == "topics":
            return blocks.render_topics(self.index.topics(), lang)
        if request.kind == "latest":
            return blocks.render_latest(self.latest(self.page_size), lang)
        if request.kind == "today":
            own = self.channel_commands.today(request.channel) if self.channel_commands else None
            return own or blocks.render_today(self.today(), lang)
        if request.kind in CHANNEL_SUBCOMMANDS:
            if self.channel_commands is None:
                return blocks.render_text(Texts(lang)("sub.need_store"))
            return self.channel_commands.handle(request.kind, request.query, request.channel, request.user)
        raise ValueError(f"not a subcommand: {request.kind}")

    def page(
        self, query: str, offset: int, lang: Language | None = None, *, looked_up: bool = False
    ) -> blocks.Message:
        lang = lang or self.language
        request = Request("search", query)
        offset = max(offset, 0)
        answer = None if looked_up else self.cached(request, offset, lang)
        if answer is None:
            result = self._search(query, offset)
            if not result.hits and result.total:  # past the end: the digest changed since
                offset = (result.total - 1) // self.page_size * self.page_size
                result = self._search(query, offset)
            shown = (result.total, [hit.entry.id for hit in result.hits]) if offset == 0 else None
            answer = self._keep(request, offset, blocks.render_results(result, lang, offset), lang, shown)
        return answer

    def _search(self, query: str, offset: int) -> SearchResult:
        return search_counted(self.index, self.usage, "command", query, self.page_size, offset)


@dataclass
class CommandHandler:
    """The Bolt listener for the slash command; what it returns is the HTTP response."""

    answers: Answers
    executor: Executor
    ack_budget: float = 1.5
    languages: UserLanguages | None = None

    def __call__(self, command: dict[str, Any], respond: Any) -> BoltResponse:
        """The acknowledgement, returned as the HTTP response (Bolt sends a returned
        BoltResponse as the ack; see `ephemeral_ack`). The asker's language, when it takes a
        `users.info` call, is looked up on the worker, inside the ack budget."""
        request = self._request(command)
        if self.answers.usage is not None:  # commands by kind (metrics)
            self.answers.usage.command(request.kind)
        user = command.get("user_id")
        lang = self.languages.cached(user) if self.languages else self.answers.language
        at_hand = self.answers.cached(request, 0, lang) if lang else None
        if at_hand is not None:
            return ephemeral_ack(at_hand)

        def answer() -> blocks.Message:
            if lang:  # looked up in the cache above, in this language: missing
                return self.answers.answer(request, lang, looked_up=True)
            return self.answers.answer(request, self.languages(user) if self.languages else None)

        return self._ack_in_time(
            self.executor.submit(answer), request, lang or self.answers.language, respond
        )

    @staticmethod
    def _request(command: dict[str, Any]) -> Request:
        """The parsed command; the channel subcommands and `today` also need where and who.
        The text is read as typed (`typed_text`: Slack's entities decoded, markup and
        control characters out), so the answer quotes `a<b`, not `a&amp;lt;b`."""
        request = parse(typed_text(str(command.get("text") or "")))
        if request.kind not in UNCACHED:
            return request
        return replace(
            request, channel=str(command.get("channel_id") or ""), user=str(command.get("user_id") or "")
        )

    def _ack_in_time(
        self, future: Future[blocks.Message], request: Request, shown: Language, respond: Any
    ) -> BoltResponse:
        """The answer if it is ready within the budget; else "searching…" now, the answer later."""
        try:
            return ephemeral_ack(future.result(timeout=self.ack_budget))
        except FutureTimeout:
            future.add_done_callback(lambda done: _respond_later(done, respond, shown))
            searching = Texts(shown)("searching", query=request.query or request.kind)
            return ephemeral_ack(blocks.render_text(searching))
        except Exception:
            log.exception("answering %r failed", request)
            return ephemeral_ack(blocks.render_text(Texts(shown)("error")))


def ephemeral_ack(message: blocks.Message) -> BoltResponse:
    """The ack carrying the answer, as UTF-8 JSON.

    `ack(**message)` would serialize with `ensure_ascii`, which turns every Chinese character
    into a six-byte `\\uXXXX` escape: answers are mostly Chinese, so that doubled the bytes on
    the wire and cost throughput (bench/http.py). orjson writes the very text of
    `json.dumps(…, ensure_ascii=False, separators=(",", ":"))` in a quarter of its time (the
    encoding was a tenth of an uncached command's CPU).
    """
    body = orjson.dumps({**message, "response_type": "ephemeral"}).decode()
    return BoltResponse(status=200, body=body, headers={"content-type": "application/json;charset=utf-8"})


def _respond_later(done: Future[blocks.Message], respond: Any, language: Language) -> None:
    """Send a late answer through the response URL, replacing the "searching…" line."""
    try:
        answer = done.result()
    except Exception:
        log.exception("late answer failed")
        answer = blocks.render_text(Texts(language)("error"))
    try:
        respond(**answer, response_type="ephemeral", replace_original=True)
    except Exception:
        log.exception("posting to the response URL failed")
