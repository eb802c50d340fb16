"""Which events the follow-up handler answers, and how an answer becomes safe mrkdwn."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chatbot.answers import FollowUpMode
from chatbot.slack.handlers.followups import (
    Delivery,
    answer_mrkdwn,
    query_language,
    route,
    strip_mentions,
)
from chatbot.slack.ledger import InMemoryLedger, message_key

BOT = "U0BOT"
OWNED = ("C1", "100.0")


def owner_of(channel: str, thread_ts: str) -> str | None:
    return "e1" if (channel, thread_ts) == OWNED else None


def routed(mode: FollowUpMode = "questions", **event: Any) -> Any:
    base: dict[str, Any] = {
        "type": "message",
        "channel": "C1",
        "user": "U0ASKER",
        "text": "重点看什么？",
        "ts": "200.0",
    }
    return route(Delivery({**base, **event}, "Ev1", BOT), owner_of, mode)


def test_replies_in_owned_threads_are_answered_about_their_entry() -> None:
    where = routed(thread_ts="100.0")
    assert where is not None
    assert (where.kind, where.entry_id, where.reply_ts, where.message_ts) == ("entry", "e1", "100.0", "200.0")
    mention = routed(type="app_mention", thread_ts="100.0")
    assert mention is not None and mention.kind == "entry"


def test_in_owned_threads_only_replies_addressed_to_the_bot_are_routed() -> None:
    """FOLLOWUPS=questions (default): questions, requests, the bot's mention; not chatter and
    not a question to somebody else. mentions: only the bot's mention. all: every reply."""
    reply: dict[str, Any] = {"thread_ts": "100.0"}
    assert routed(text="explain the design", **reply) is not None
    assert routed(text="lgtm, thanks 👍", **reply) is None
    assert routed(text="<@U0ALICE> 你看下这个？", **reply) is None
    assert routed(text="<!here> 有人跑过 benchmark 吗？", **reply) is None
    assert routed(text=f"<@U0ALICE> <@{BOT}> 有什么风险？", **reply) is not None
    assert routed(text=f"<@{BOT}> 谢谢！", **reply) is None  # thanks, even to the bot, is not a question
    assert routed(text=f"<@{BOT}>", **reply) is not None  # a bare mention asks for the summary
    assert routed(type="app_mention", text=f"<@{BOT}> 讲讲测试", **reply) is not None
    assert routed("mentions", text="重点看什么？", **reply) is None
    assert routed("mentions", text=f"<@{BOT}> 重点看什么？", **reply) is not None
    assert routed("all", text="lgtm, thanks", **reply) is not None


def test_mentions_elsewhere_are_topic_queries_answered_under_the_mention() -> None:
    top = routed(type="app_mention", text=f"<@{BOT}> compile")
    assert top is not None and (top.kind, top.reply_ts) == ("search", "200.0")
    foreign = routed(type="app_mention", thread_ts="150.0")
    assert foreign is not None and (foreign.kind, foreign.reply_ts) == ("search", "150.0")


def test_what_is_never_answered() -> None:
    assert routed() is None  # top-level, no mention
    assert routed(thread_ts="150.0") is None  # a thread the bot does not own
    assert routed(thread_ts="100.0", user=BOT) is None
    assert routed(thread_ts="100.0", bot_id="B1") is None
    assert routed(type="app_mention", bot_id="B1") is None
    for subtype in ("bot_message", "message_changed", "message_deleted", "channel_join", "me_message"):
        assert routed(thread_ts="100.0", subtype=subtype) is None
    assert routed(thread_ts="100.0", subtype="file_share") is not None
    assert routed(thread_ts="100.0", subtype="thread_broadcast") is not None
    # The parent itself (thread_ts == ts) is not a reply.
    assert routed(ts="100.0", thread_ts="100.0") is None


def test_in_memory_dedup_marks_once() -> None:
    handled = InMemoryLedger()
    assert handled.mark_handled(message_key("C1", "1.0")) and not handled.mark_handled(
        message_key("C1", "1.0")
    )
    assert handled.mark_handled(message_key("C2", "1.0"))
    assert handled.prune_handled_events(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)) == 2
    assert handled.mark_handled(message_key("C1", "1.0"))


def test_mentions_are_stripped_and_language_follows_the_asker() -> None:
    assert strip_mentions("<@U0BOT> speculative  decoding <#C1|general>") == "speculative decoding"
    assert query_language("投机解码", "en") == "zh"
    assert query_language("what about speculative decoding", "zh") == "en"
    assert query_language("compile", "zh") == "zh"


def test_pr_urls_become_short_links() -> None:
    text = "重点：a < b & c\nhttps://github.com/vllm-project/vllm/pull/52912"
    assert answer_mrkdwn(text) == (
        "重点：a &lt; b &amp; c\n<https://github.com/vllm-project/vllm/pull/52912|#52912>"
    )


_OUR_LINK = re.compile(r"<https://github\.com/[\w.\-]+/[\w.\-]+/(?:pull|issues)/\d+\|#\d+>")


@given(st.text(alphabet=st.sampled_from(list("<>&|!@#:/ab1 ")) | st.characters(), max_size=200))
def test_nothing_typed_becomes_markup(text: str) -> None:
    rendered = answer_mrkdwn(text + " https://github.com/vllm-project/vllm/pull/1")
    outside_links = _OUR_LINK.sub("", rendered)
    assert "<" not in outside_links and ">" not in outside_links
    assert "<!" not in rendered and "<@" not in rendered
