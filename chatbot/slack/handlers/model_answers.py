"""Follow-ups answered by the team's model server, streamed into the thread, with the extractive floor.

Flow for one question (already routed and deduplicated by FollowUps, running after the ack):
post a placeholder in the thread → `chat.update` it with the text so far at most once per
`update_every` seconds → when the stream ends, check the answer against the entries it was given
(grounding.py) → a final update with the model's answer and its source line, or with the extractive
answer when the model failed, timed out, was cut off by the circuit breaker, or named a fact the
entries don't hold. Whatever happens, the asker gets one message, within LLM_TIMEOUT. At shutdown
(`cut`, SIGTERM) the streams end at once and the extractive answer takes the placeholder's place.
Under Slack's rate limits a progress update is skipped while chat.update is held in the channel;
the final update waits out the hold and is sent again (never a second message beside the placeholder).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.answers.grounding import review
from chatbot.answers.model_prompt import Lang, Message, digest_messages, entry_messages
from chatbot.digest import Entry
from chatbot.llm import ModelClient, ModelError, StreamCut, StreamCutError, stream_within
from chatbot.slack import blocks
from chatbot.slack.i18n import Texts
from chatbot.slack.mrkdwn import MAX_SECTION_TEXT, escape, link, truncate
from chatbot.slack.ratelimits import held
from chatbot.slack.webapi import post, send

log = logging.getLogger(__name__)

CURSOR = " ▌"
# The final update is sent again this many times while Slack answers `ratelimited` (each after
# the hold: the client waits out Retry-After, and retries 429s itself first).
FINAL_UPDATE_TRIES = 3
_CITATION = re.compile(r"\[#(\d{1,7})\]|(?<![\w&/])#(\d{2,7})\b")


def model_mrkdwn(text: str, entries: Sequence[Entry]) -> str:
    """The model's text as mrkdwn: escaped, `[#N]`/`#N` of the given entries linked to their PRs."""
    urls = {e.pr: e.url for e in entries if e.pr and e.url}
    for entry in entries:
        for ref in [*entry.refs, *entry.related]:
            urls.setdefault(ref.number, ref.url)

    def cite(match: re.Match[str]) -> str:
        number = int(match.group(1) or match.group(2))
        url = urls.get(number)
        return link(url, f"#{number}") if url else match.group(0)

    return truncate(_CITATION.sub(cite, escape(text)), MAX_SECTION_TEXT)


def entry_link(entry: Entry) -> str:
    return link(entry.url, f"#{entry.pr}") if entry.url and entry.pr else escape(entry.title)


class ModelAnswers:
    """Streams model answers into Slack threads; `fallback` messages are the extractive answers."""

    def __init__(
        self,
        model: ModelClient,
        timeout: float,
        update_every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        cut: StreamCut | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.update_every = update_every
        self.clock = clock
        self.cut = cut or StreamCut()

    def answer_entry(
        self,
        client: WebClient,
        channel: str,
        thread_ts: str,
        entry: Entry,
        question: str,
        lang: Lang,
        fallback: blocks.Message,
        related: Sequence[Entry] = (),
        feedback: blocks.Block | None = None,
    ) -> None:
        """Answer a question in an entry's thread; `feedback` (👍/👎) goes under the model's answer."""
        texts = Texts(lang)
        source = texts.mrkdwn("model.source", markup={"link": entry_link(entry)})
        self._stream(
            client, channel, thread_ts, entry_messages(entry, question, lang, related), [entry], lang,
            source, fallback, feedback,
        )  # fmt: skip

    def answer_digest(
        self,
        client: WebClient,
        channel: str,
        thread_ts: str,
        entries: Sequence[Entry],
        question: str,
        lang: Lang,
        fallback: blocks.Message,
    ) -> None:
        """Answer a question across the digest from the retrieved entries, citing each PR."""
        texts = Texts(lang)
        links = " ".join(entry_link(e) for e in entries)
        source = texts.mrkdwn("model.source_digest", markup={"links": links})
        self._stream(
            client, channel, thread_ts, digest_messages(entries, question, lang), entries, lang, source,
            fallback,
        )  # fmt: skip

    def _stream(
        self,
        client: WebClient,
        channel: str,
        thread_ts: str,
        messages: Sequence[Message],
        entries: Sequence[Entry],
        lang: Lang,
        source: str,
        fallback: blocks.Message,
        feedback: blocks.Block | None = None,
    ) -> None:
        deadline = self.clock() + self.timeout
        if self.cut.done or not self.model.breaker.allow():
            log.info("model answer skipped: circuit open or shutting down; extractive answer instead")
            send(client, channel, fallback, thread_ts=thread_ts)
            return
        thinking = blocks.render_text(Texts(lang)("model.thinking"))
        placeholder = post(client, channel, thinking, what="answer", thread_ts=thread_ts)
        if placeholder is None:  # Slack refused the placeholder: the answer itself may still go
            send(client, channel, fallback, thread_ts=thread_ts)
            return
        progress = _Progress(client, channel, placeholder, entries, self.update_every, self.clock)
        try:
            text = stream_within(
                lambda: self.model.stream(messages), deadline, progress, self.clock, self.cut
            ).strip()
        except ModelError as exc:
            if not isinstance(exc, StreamCutError):
                self.model.breaker.failure(exc.retry_after)
            log.warning("model answer failed (%s); extractive answer instead", exc)
            _finish(client, channel, thread_ts, placeholder, fallback)
            return
        self.model.breaker.success()
        problem, details = review(text, entries, lang)
        if problem:
            log.warning(
                "model answer %s (%s); extractive answer instead", _PROBLEMS[problem], ", ".join(details)
            )
            _finish(client, channel, thread_ts, placeholder, fallback)
            return
        parts = [blocks.section(model_mrkdwn(text, entries)), blocks.context(source)]
        final = blocks.message(text, [*parts, feedback] if feedback is not None else parts)
        _finish(client, channel, thread_ts, placeholder, final)


_PROBLEMS = {"empty": "empty", "language": "in the wrong language", "ungrounded": "not grounded"}


class _Progress:
    """The text so far into the placeholder, at most once per `every` seconds, escaped like the
    answer (its fallback text too: a streamed `<!channel>` must not ping); after one refused update
    the rest of the stream is not shown (one log line, not one per second), the final update still tries."""

    def __init__(
        self,
        client: WebClient,
        channel: str,
        ts: str,
        entries: Sequence[Entry],
        every: float,
        clock: Callable[[], float],
    ) -> None:
        self.client, self.channel, self.ts, self.entries = client, channel, ts, entries
        self.every, self.clock = every, clock
        self.shown_at = clock()
        self.broken = False

    def __call__(self, text: str) -> None:
        now = self.clock()
        if self.broken or now - self.shown_at < self.every or held(self.client, self.channel, "chat.update"):
            return
        self.shown_at = now
        partial = blocks.message(text, [blocks.section(model_mrkdwn(text, self.entries) + CURSOR)])
        self.broken = not _update(self.client, self.channel, self.ts, partial)


def _update(client: WebClient, channel: str, ts: str, message: blocks.Message) -> bool:
    try:
        client.chat_update(channel=channel, ts=ts, text=message["text"], blocks=message["blocks"])
    except (SlackApiError, SlackClientError) as exc:
        log.warning("updating answer %s %s failed: %s", channel, ts, exc)
        return False
    return True


def _finish(
    client: WebClient, channel: str, thread_ts: str, placeholder: str, message: blocks.Message
) -> None:
    """The answer in place of the placeholder. When Slack refuses the update (the placeholder was
    deleted, cannot be edited, …) the answer is posted in the thread instead, never left unanswered;
    `ratelimited` is not a refusal (the update is sent again after the hold), nor is a timeout or
    dropped connection (the update may have landed: no second answer)."""
    for attempt in range(1, FINAL_UPDATE_TRIES + 1):
        try:
            client.chat_update(
                channel=channel, ts=placeholder, text=message["text"], blocks=message["blocks"]
            )
            return
        except SlackApiError as exc:
            if exc.response.get("error") != "ratelimited":
                log.warning(
                    "updating answer %s %s refused (%s); posting it instead", channel, placeholder, exc
                )
                send(client, channel, message, thread_ts=thread_ts)
                return
            log.info(
                "updating answer %s %s: rate-limited (try %d), again after Retry-After",
                channel,
                placeholder,
                attempt,
            )
        except SlackClientError as exc:
            log.warning("updating answer %s %s failed: %s", channel, placeholder, exc)
            return
    log.error(
        "updating answer %s %s: still rate-limited after %d tries; the placeholder stays",
        channel,
        placeholder,
        FINAL_UPDATE_TRIES,
    )
