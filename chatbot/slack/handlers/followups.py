"""Follow-ups: questions in the bot's threads, and @mentions, answered once each.

`triage` decides which events are answered (docs/answers.md, "In Slack"). Once per message: Slack
retries events and a reply that mentions the bot arrives twice (`message` and `app_mention`), all
with the message's (channel, ts), so that is the one mark in the ledger. The mark comes before
the post: a crash in between loses that answer rather than risking two.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.answers import Answer, Answerer, FollowUpMode, addressed_to_bot
from chatbot.answers.model_prompt import answer_language
from chatbot.digest import Entry
from chatbot.slack import action_ids as ids
from chatbot.slack import blocks
from chatbot.slack.feedback import feedback_row
from chatbot.slack.handlers.command import Searchable, search_counted
from chatbot.slack.handlers.model_answers import ModelAnswers, entry_link
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.ledger import KEEP, Ledger, first_delivery, message_key
from chatbot.slack.mrkdwn import MAX_SECTION_TEXT, escape, link, truncate
from chatbot.slack.webapi import maybe_stored, send
from chatbot.store import OutageQueue, RememberedThreads, ThreadRegistry, attempt_or_hold
from chatbot.text import has_han, typed_text
from chatbot.usage import FeedbackTarget
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

# Subtypes that are still a person's message; every other subtype (edits, deletions, joins,
# bot messages, …) is not a question.
ANSWERED_SUBTYPES = frozenset({"file_share", "thread_broadcast"})

# Markup that calls people: a user, a user group, @here/@channel/@everyone (not a channel link).
_USER_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^<>]*)?>")
_PEOPLE_CALL = re.compile(r"<!(?:subteam\^[^<>]*|here|channel|everyone)(?:\|[^<>]*)?>")
# A PR or issue URL in an answer (escaped text: no <, >, & inside), with the "#N " the answerer
# may have put before it: the link is shown as #N, so the number is not printed twice.
_PR_URL = re.compile(
    r"(?:#(?P<label>\d+)\s+)?(?P<url>https://github\.com/[\w.\-]+/[\w.\-]+/(?:pull|issues)/(?P<n>\d+))(?![\w/])"
)
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

TOP_RESULTS = 3
# Askers told their question was given up, remembered so that `message` + `app_mention` tell once.
TOLD_KEPT = 10_000
# Old dedup marks are dropped at most once an hour, keeping KEEP (Slack retries for minutes).
PRUNE_EVERY = 3600.0
# A bare mention in an entry's thread asks for the summary, in the configured language.
BARE_MENTION_QUESTION: dict[Language, str] = {"zh": "一句话总结", "en": "tl;dr"}


@dataclass(frozen=True)
class Delivery:
    """One event as the listener got it: the event, its envelope's id, whose app this is."""

    event: dict[str, Any]
    event_id: str | None = None
    bot_user_id: str | None = None
    retry: int = 0  # X-Slack-Retry-Num (HTTP) or retry_attempt (Socket Mode)


@dataclass(frozen=True)
class Route:
    """What to do with an event: answer about an entry, or search a topic; where to reply."""

    kind: Literal["entry", "search"]
    channel: str
    message_ts: str
    reply_ts: str
    text: str
    entry_id: str | None = None


def outcome_unknown(error: BaseException) -> bool:
    """A connection error after the request may have reached Slack, or Slack answered 5xx (it may
    have stored the post before failing): the post may be there."""
    return isinstance(error, SlackApiError | OSError) and maybe_stored(error)


def answered_in_thread(where: Route, client: WebClient) -> bool:
    """Whether a bot message newer than the question is in its thread: an answer whose response
    was lost. Then an apology ("could not answer") would be a second, contradicting reply."""
    try:
        replies = client.conversations_replies(
            channel=where.channel, ts=where.reply_ts, oldest=where.message_ts
        )
    except (SlackApiError, SlackClientError, OSError) as exc:
        log.warning("follow-up in %s %s: could not read the thread (%s)", where.channel, where.reply_ts, exc)
        return False
    messages = replies.get("messages") or []
    found = any(m.get("bot_id") and float(m.get("ts", 0)) > float(where.message_ts) for m in messages)
    if found:
        log.info(
            "follow-up answer in %s %s: no answer from Slack, found it in the thread",
            where.channel,
            where.reply_ts,
        )
    return found


def triage(
    delivery: Delivery, owner_of: Callable[[str, str], str | None], mode: FollowUpMode = "questions"
) -> Route | str:
    """The routing rules (docs/answers.md): a Route, or why the event is skipped (for the log).
    `owner_of(channel, thread_ts)` is the registry lookup, `mode` the `FOLLOWUPS` setting (which
    replies in an owned thread are for the bot)."""
    skipped = not_a_person(delivery)
    if skipped is not None:
        return skipped
    event = delivery.event
    mentioned = event.get("type") == "app_mention"
    channel, ts, text = str(event["channel"]), str(event["ts"]), str(event.get("text") or "")
    thread = reply_thread(event)
    entry_id = owner_of(channel, thread) if thread else None
    if thread and entry_id is not None:
        if not is_for_bot(text, delivery.bot_user_id, mode, mentioned=mentioned):
            return f"not addressed to the bot (FOLLOWUPS={mode})"
        return Route("entry", channel, ts, thread, text, entry_id)
    if mentioned:
        return Route("search", channel, ts, str(event.get("thread_ts") or ts), text)
    return "a reply in a thread the bot does not own" if thread else "a channel message without a mention"


def reply_thread(event: dict[str, Any]) -> str | None:
    """The parent's ts when the event is a reply in a thread (a parent's own ts is not a reply)."""
    thread_ts = event.get("thread_ts")
    return str(thread_ts) if thread_ts and thread_ts != event.get("ts") else None


def not_a_person(delivery: Delivery) -> str | None:
    """Why the event is not a person's message to read (another event type, a bot, an edit, …),
    or None when it is one."""
    event = delivery.event
    kind, subtype = event.get("type"), event.get("subtype")
    checks = (
        (kind not in ("message", "app_mention"), f"event type {kind}"),
        (bool(event.get("bot_id")) or subtype == "bot_message", "a bot's message"),
        (bool(event.get("hidden")), "a hidden message"),
        (subtype is not None and subtype not in ANSWERED_SUBTYPES, f"subtype {subtype}"),
        (not (event.get("user") and event.get("channel") and event.get("ts")), "no user, channel or ts"),
        (event.get("user") == delivery.bot_user_id, "the bot's own message"),
    )
    return next((why for failed, why in checks if failed), None)


def route(
    delivery: Delivery, owner_of: Callable[[str, str], str | None], mode: FollowUpMode = "questions"
) -> Route | None:
    """The Route of an event, None when it is skipped (`triage` says why)."""
    where = triage(delivery, owner_of, mode)
    return where if isinstance(where, Route) else None


def is_for_bot(text: str, bot_user_id: str | None, mode: FollowUpMode, *, mentioned: bool = False) -> bool:
    """Whether a reply in an owned thread is addressed to the bot: Slack's mentions are read
    here, the rule itself is the core's `addressed_to_bot`."""
    users = set(_USER_MENTION.findall(text))
    mentions_bot = mentioned or (bot_user_id is not None and bot_user_id in users)
    mentions_others = bool(users - {bot_user_id}) or bool(_PEOPLE_CALL.search(text))
    return addressed_to_bot(
        strip_mentions(text), mentions_bot=mentions_bot, mentions_others=mentions_others, mode=mode
    )


_QUESTION_WORDS = re.compile(
    r"^(?:what|which|why|how|who|when|where|is|are|does|do|can|should|could|would|will)\b"
    r"|[?？]\s*$|什么|怎么|为什么|哪些|哪个|哪|吗|呢|多少|是否|如何|应该",
    re.I,
)


def is_question(text: str) -> bool:
    """A mention that asks something ("which PRs touch CUDA graphs?") rather than names a topic."""
    return bool(_QUESTION_WORDS.search(text.strip()))


def strip_mentions(text: str) -> str:
    """The words of a mention: `<@BOT> speculative decoding` → `speculative decoding`
    (and `&lt;b&gt;` → `<b>`: `chatbot.text.typed_text`)."""
    return " ".join(typed_text(text).split())


def thread_question(text: str) -> str:
    """A thread reply as the answerer reads it: mentions gone, its lines kept, since a quote of the
    bot's answer (`&gt; …`) is a line of its own above the question."""
    lines = (" ".join(line.split()) for line in typed_text(text).splitlines())
    return "\n".join(line for line in lines if line)


def query_language(query: str, default: Language) -> Language:
    """Interface words follow the asker: Chinese characters → zh, an English sentence (3+
    words) → en, a bare topic word (`compile`) → the configured language."""
    if has_han(query):
        return "zh"
    if len(_LATIN_WORD.findall(query)) >= 3:
        return "en"
    return default


def answer_mrkdwn(text: str) -> str:
    """An answer's plain text as mrkdwn: escaped (nothing typed becomes `<!channel>`), its PR
    and issue URLs as `<url|#N>` links, within one section."""
    escaped = escape(text)
    linked = _PR_URL.sub(_short_link, escaped)
    return truncate(linked, MAX_SECTION_TEXT)


def _short_link(match: re.Match[str]) -> str:
    shown = link(match.group("url"), f"#{match.group('n')}")
    label = match.group("label")
    if label is not None and label != match.group("n"):
        return f"#{label} {shown}"
    return shown


def answer_rating(where: Route, entry: Entry, answer: Answer) -> FeedbackTarget:
    """What 👍/👎 under an answer rate: this answer (the question's message) about this entry."""
    return FeedbackTarget("answer", f"{where.channel}:{where.message_ts}", entry.id, answer.intent)


def render_answer(answer: Answer, feedback: FeedbackTarget | None = None) -> blocks.Message:
    """The answer, with 👍/👎 under it when `feedback` names what they rate."""
    shown = [blocks.section(answer_mrkdwn(answer.text))]
    if feedback is not None:
        shown.append(feedback_row(feedback, answer.lang))
    return blocks.message(answer.text, shown)


def render_top_results(
    index: Searchable,
    query: str,
    lang: Language,
    usage: UsageRecorder | None = None,
    source: str = "mention",
) -> blocks.Message:
    """The top results of a mention's topic query, without the More button (a thread reply is
    for everyone; paging belongs to the slash command). No match: says so, suggests topics."""
    if not query:
        return blocks.render_help(lang)
    result = search_counted(index, usage, source, query, TOP_RESULTS)
    message = blocks.render_results(result, lang)
    kept = without_more_button(message["blocks"])
    if not result.hits and not result.suggestions:
        topics = ", ".join(f"`{escape(t)}`" for t, _ in index.topics()[:8])
        if topics:
            kept.append(blocks.section(Texts(lang).mrkdwn("no_match.suggest", markup={"topics": topics})))
    return {"text": message["text"], "blocks": kept}


def without_more_button(shown: list[blocks.Block]) -> list[blocks.Block]:
    """The blocks without the More results button (and without a row it leaves empty)."""
    more = f"{ids.MORE_RESULTS}:"
    kept = []
    for block in shown:
        if block["type"] == "actions":
            elements = [e for e in block["elements"] if not str(e.get("action_id", "")).startswith(more)]
            if not elements:
                continue
            block = {**block, "elements": elements}
        kept.append(block)
    return kept


class FollowUps:
    """The follow-up handler: route, deduplicate, answer in the thread."""

    def __init__(
        self,
        answerer: Answerer,
        lookup: Callable[[str], Entry | None],
        index: Searchable,
        threads: ThreadRegistry,
        handled: Ledger,
        language: Language,
        *,
        mode: FollowUpMode = "questions",
        keep_handled: dt.timedelta = KEEP,
        usage: UsageRecorder | None = None,
        clock: Callable[[], float] = time.monotonic,
        model: ModelAnswers | None = None,
        languages: Callable[[str | None], Language] | None = None,
        outage: OutageQueue | None = None,
    ) -> None:
        self.answerer = answerer
        self.outage = outage  # holds a question the database could not take (None: raise)
        self._told: set[tuple[str, str]] = set()
        self.lookup = lookup
        self.index = index
        self.threads = threads
        self.handled = handled
        self.usage = usage  # counts turned-away deliveries and answers (None: not counted)
        self.language: Language = language
        self.mode: FollowUpMode = mode
        self.keep_handled = keep_handled
        self.clock = clock
        self.model = model
        self.languages = languages  # the asker's language (DIGEST_LANGUAGE=auto); else `language`
        self._pruned_at = -math.inf
        self._prune_lock = threading.Lock()

    def __call__(self, delivery: Delivery, client: WebClient) -> None:
        """Answer the delivery; when the database is away, hold it in the outage queue (answered
        once the database is back, or the asker told once), never acknowledged and dropped."""
        event = delivery.event
        where = f"{event.get('type')} {event.get('channel')} {event.get('ts')}"
        attempt_or_hold(
            self.outage,
            f"{event.get('type')}:{event.get('channel')}:{event.get('ts')}",
            f"the {where} from {event.get('user')}",
            lambda: self.handle(delivery, client),
            lambda _reason: self.tell_unanswered(delivery, client),
        )

    def tell_unanswered(self, delivery: Delivery, client: WebClient) -> None:
        """Tell the asker once that the question will not be answered (the database stayed away):
        only where the bot would have answered, as far as this process knows without the
        database (a thread it registered or looked up, a mention, a direct message)."""
        known = self.threads.known if isinstance(self.threads, RememberedThreads) else None
        where = triage(delivery, known or (lambda _c, _t: None), self.mode)
        if isinstance(where, str):
            event = delivery.event
            log.error(
                "could not tell the asker of %s %s without the database: %s",
                event.get("channel"),
                event.get("ts"),
                where,
            )
            return
        with self._prune_lock:
            if (where.channel, where.message_ts) in self._told:
                return
            if len(self._told) > TOLD_KEPT:
                self._told.clear()
            self._told.add((where.channel, where.message_ts))
        language = query_language(strip_mentions(where.text), self.language)
        client.chat_postMessage(
            channel=where.channel, thread_ts=where.reply_ts, text=Texts(language)("followup.outage")
        )

    def handle(self, delivery: Delivery, client: WebClient) -> None:
        """Route, mark, answer; raises a store failure (nothing posted) while the database is away."""
        where = triage(delivery, self.threads.entry_for, self.mode)
        if isinstance(where, str):
            log.debug("event %s skipped: %s", delivery.event_id, where)
            return
        if not first_delivery(self.handled, message_key(where.channel, where.message_ts), self.usage):
            log.info(  # a retry or a second delivery: worth seeing at the default level
                "event %s (retry %d) skipped: message %s %s already answered",
                delivery.event_id,
                delivery.retry,
                where.channel,
                where.message_ts,
            )
            return
        user = delivery.event.get("user")
        asker = self.languages(str(user)) if self.languages else self.language
        try:
            if self.model is None or not self.answer_with_model(where, client, self.model, asker):
                send(client, where.channel, self.reply(where, asker), thread_ts=where.reply_ts)
        except Exception as exc:  # the mark is taken: without a word the asker waits for nothing
            log.warning("follow-up answer in %s %s failed: %r", where.channel, where.reply_ts, exc)
            if not (outcome_unknown(exc) and answered_in_thread(where, client)):
                self.apologise(where, client)
        self.prune()

    def apologise(self, where: Route, client: WebClient) -> None:
        """Say in the thread that answering failed: Slack's retries of this message are
        deduplicated away, so asking again is the asker's only way to an answer."""
        language = query_language(strip_mentions(where.text), self.language)
        try:
            client.chat_postMessage(
                channel=where.channel, thread_ts=where.reply_ts, text=Texts(language)("followup.failed")
            )
        except (SlackApiError, SlackClientError) as exc:
            log.warning("apology in %s %s failed too: %s", where.channel, where.reply_ts, exc)

    def prune(self) -> None:
        """Drop dedup marks older than `keep_handled`, at most every PRUNE_EVERY seconds."""
        now = self.clock()
        with self._prune_lock:
            if now - self._pruned_at < PRUNE_EVERY:
                return
            self._pruned_at = now
        try:
            removed = self.handled.prune_handled_events(dt.datetime.now(dt.UTC) - self.keep_handled)
        except Exception:
            log.exception("pruning handled events failed")
            return
        if removed:
            log.info("pruned %d handled-event marks", removed)

    def answer_with_model(
        self, where: Route, client: WebClient, model: ModelAnswers, default: Language | None = None
    ) -> bool:
        """Stream the model's answer into the thread (True), or leave the event to `reply` (False):
        a mention that is a topic rather than a question, or a question nothing in the digest is
        about, gets today's answer. `default`: the asker's language, when known."""
        default = default or self.language
        if where.kind == "entry":
            entry = self.lookup(where.entry_id or "")
            if entry is None:
                return False
            question = thread_question(where.text) or BARE_MENTION_QUESTION[default]
            lang = answer_language(question, default)
            answer = self.answer_counted(entry, question)
            source = Texts(lang).mrkdwn("extractive.source", markup={"link": entry_link(entry)})
            rating = answer_rating(where, entry, answer)
            fallback = render_answer(answer, rating)
            fallback = {**fallback, "blocks": [*fallback["blocks"], blocks.context(source)]}
            related = self.answerer.same_topic_entries(entry, limit=3)
            model.answer_entry(
                client, where.channel, where.reply_ts, entry, question, lang, fallback, related,
                feedback=feedback_row(rating, lang),
            )  # fmt: skip
            return True
        question = strip_mentions(where.text)
        if not is_question(question):
            return False
        hits = search_counted(self.index, self.usage, "mention", question, TOP_RESULTS).hits
        if not hits:
            return False
        lang = answer_language(question, default)
        fallback = render_top_results(self.index, question, query_language(question, default), self.usage)
        entries = [hit.entry for hit in hits]
        model.answer_digest(client, where.channel, where.reply_ts, entries, question, lang, fallback)
        return True

    def reply(self, where: Route, lang: Language | None = None) -> blocks.Message:
        """The message answering a routed event; `lang`: the asker's, when known."""
        lang = lang or self.language
        if where.kind == "search":
            query = strip_mentions(where.text)
            return render_top_results(self.index, query, query_language(query, lang), self.usage)
        question = thread_question(where.text) or BARE_MENTION_QUESTION[lang]
        entry = self.lookup(where.entry_id or "")
        if entry is None:
            return blocks.render_text(Texts(query_language(question, lang))("entry.gone"))
        answer = self.answer_counted(entry, question)
        return render_answer(answer, answer_rating(where, entry, answer))

    def answer_counted(self, entry: Entry, question: str) -> Answer:
        """The answerer's answer; with `usage`, its time, intent and whether the note had it
        (the question itself is kept only when it did not)."""
        started = time.perf_counter()
        answer = self.answerer.answer(entry, question)
        if self.usage is not None:
            seconds = time.perf_counter() - started
            self.usage.answer(entry.id, answer.intent, answer.found, question, seconds)
        return answer
