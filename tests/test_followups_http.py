"""Follow-ups end to end: signed events over real HTTP, answers in the fake Slack, dedup in SQL."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from chatbot.bot import Bot
from chatbot.settings import Settings
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.conftest import DIGESTS
from tests.fakeslack import Call, FakeSlack
from tests.slackrequests import SIGNING_SECRET, all_text, event_body, post, signed_headers

CHANNEL = "C0DAILY"
DAY = dt.date(2026, 11, 30)
# The pick for (C0DAILY, 2026-11-30) on an empty store: the PD entry, whose focus point is this.
PD_ENTRY = "576f1e507a"
PD_FOCUS = "8 行修复如何解除「前缀缓存越好 PD 越慢」的反直觉失效"
PD_LINK = "<https://github.com/vllm-project/vllm/pull/52912|#52912>"
SM120_TITLE = "修复 SM120 上 DSv4 投机解码启动崩溃，eidx 改全宽连续"
SM120_URL = "https://github.com/vllm-project/vllm/pull/53574"


@dataclass
class App:
    """The bot served over HTTP, on a store at `db_url`."""

    fake: FakeSlack
    db_url: str
    store: SqlStore = field(init=False)
    bot: Bot = field(init=False)
    server: HttpServer = field(init=False)

    def __post_init__(self) -> None:
        self.start()

    def start(self) -> None:
        self.store = SqlStore.open(self.db_url)
        self.bot = build(settings_for(self.fake), store=self.store)
        self.server = HttpServer(asgi_app(self.bot.app), host="127.0.0.1", port=0).start()

    def stop(self) -> None:
        self.server.stop()
        self.bot.close()
        self.store.close()

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/slack/events"

    def send(self, body: str, retry: int = 0) -> None:
        headers = {**signed_headers(body), "Content-Type": "application/json"}
        if retry:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        response = post(self.url, body, headers)
        assert response.status_code == 200

    def settle(self) -> None:
        """Wait until every lazy listener finished (no sleeping)."""
        assert self.bot.wait_idle(timeout=10)

    def replies(self) -> list[Call]:
        return [c for c in self.fake.calls("chat.postMessage") if c.params.get("thread_ts")]


def settings_for(fake: FakeSlack) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        slack_bot_token="xoxb-test",
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=fake.api_url,
        digest_dir=DIGESTS,
        language="zh",
    )


@pytest.fixture
def app(fake_slack: FakeSlack, db_url: str) -> Iterator[App]:
    served = App(fake_slack, db_url)
    yield served
    served.stop()


def post_pr_of_the_day(app: App) -> str:
    """The wired daily poster posts into the fake Slack and registers its thread; its ts."""
    assert app.bot.daily is not None
    result = app.bot.daily.run(CHANNEL, DAY)
    assert result.ok and result.entry_id == PD_ENTRY and result.message_ts
    posted = app.fake.wait_for("chat.postMessage", where=lambda c: not c.params.get("thread_ts"))
    assert "今日 PR" in all_text(posted.params)
    return result.message_ts


def event(text: str, *, ts: str, thread_ts: str | None = None, kind: str = "message", **extra: Any) -> str:
    """An event_callback body as Slack sends it, with a fresh event id."""
    inner: dict[str, Any] = {"type": kind, "channel": CHANNEL, "user": "U0ASKER", "text": text, "ts": ts}
    if kind == "message":
        inner["channel_type"] = "channel"
    if thread_ts:
        inner["thread_ts"] = thread_ts
    inner |= extra
    return event_body(inner)


def test_a_reply_under_the_pr_of_the_day_is_answered_in_its_thread_from_the_entry(app: App) -> None:
    parent = post_pr_of_the_day(app)
    started = time.perf_counter()
    app.send(event("重点看什么？", ts="1800000000.000100", thread_ts=parent))
    answer = app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent)
    latency = time.perf_counter() - started
    assert answer.params["channel"] == CHANNEL
    shown = all_text(answer.params)
    assert PD_FOCUS in shown and "重点" in shown
    assert PD_LINK in shown
    assert latency < 2.0


def test_an_english_question_gets_english_interface_words(app: App) -> None:
    parent = post_pr_of_the_day(app)
    app.send(event("who should read this?", ts="1800000000.000200", thread_ts=parent))
    answer = app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent)
    shown = all_text(answer.params)
    assert "Audience not stated; topics: pd disaggregation, kv offload." in shown
    assert PD_LINK in shown


def test_a_retried_event_is_not_answered_again_even_after_a_restart(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    app = App(fake_slack, f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        parent = post_pr_of_the_day(app)
        body = event("有什么风险？", ts="1800000000.000300", thread_ts=parent)
        app.send(body)
        app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent)
        app.send(body, retry=1)
        app.send(body, retry=2)
        app.settle()
        assert len(app.replies()) == 1
        app.restart()
        app.send(body, retry=3)
        # The same message under a new event id (e.g. a replica's view) is caught by its ts.
        app.send(event("有什么风险？", ts="1800000000.000300", thread_ts=parent))
        app.settle()
        assert len(app.replies()) == 1
        # The restarted app still owns the thread and answers a new question in it.
        app.send(event("怎么测的？", ts="1800000000.000301", thread_ts=parent))
        app.fake.wait_for("chat.postMessage", count=2, where=lambda c: c.params.get("thread_ts") == parent)
    finally:
        app.stop()


def test_a_reply_that_mentions_the_bot_is_answered_once(app: App) -> None:
    parent = post_pr_of_the_day(app)
    text = f"<@{app.fake.bot_user_id}> 重点看什么？"
    ts = "1800000000.000400"
    app.send(event(text, ts=ts, thread_ts=parent))
    app.send(event(text, ts=ts, thread_ts=parent, kind="app_mention"))
    app.settle()
    replies = app.replies()
    assert len(replies) == 1
    assert PD_FOCUS in all_text(replies[0].params)


def test_bots_edits_foreign_threads_and_plain_channel_messages_are_ignored(app: App) -> None:
    parent = post_pr_of_the_day(app)
    bot = app.fake.bot_user_id
    ignored = [
        event("card", ts="1800000000.000501", thread_ts=parent, user=bot, bot_id="BBOT0001"),
        event("另一个 bot", ts="1800000000.000502", thread_ts=parent, user="U0OTHER", bot_id="B0OTHER"),
        event("bot message", ts="1800000000.000503", thread_ts=parent, subtype="bot_message", bot_id="B0X"),
        event(
            "",
            ts="1800000000.000504",
            subtype="message_changed",
            message={"text": "重点看什么？", "ts": "1800000000.000100", "thread_ts": parent},
        ),
        event("", ts="1800000000.000505", subtype="message_deleted", deleted_ts="1800000000.000100"),
        event("重点看什么？", ts="1800000000.000506", thread_ts="1700000000.000001"),
        event("重点看什么？", ts="1800000000.000507"),
        event("has joined", ts="1800000000.000508", subtype="channel_join"),
    ]
    for body in ignored:
        app.send(body)
    app.settle()
    assert app.replies() == []
    # A sentinel after them is answered: the app was listening all along.
    app.send(event("有什么风险？", ts="1800000000.000509", thread_ts=parent))
    app.settle()
    assert len(app.replies()) == 1


def test_skips_are_logged_at_debug_with_their_reason(app: App, caplog: pytest.LogCaptureFixture) -> None:
    parent = post_pr_of_the_day(app)
    bot = app.fake.bot_user_id
    # Bolt's own ignore-self filter is off: the bot's message in its thread reaches our rule.
    skipped = {
        event(
            "card", ts="1800000000.000551", thread_ts=parent, user=bot, bot_id="BBOT0001"
        ): "a bot's message",
        event("", ts="1800000000.000552", subtype="message_deleted"): "subtype message_deleted",
        event("重点看什么？", ts="1800000000.000553", thread_ts="1700000000.000001"): (
            "a reply in a thread the bot does not own"
        ),
        event("重点看什么？", ts="1800000000.000554"): "a channel message without a mention",
    }
    with caplog.at_level(logging.DEBUG, logger="chatbot.slack.handlers.followups"):
        for body in skipped:
            app.send(body)
        app.settle()
        retried = event("有什么风险？", ts="1800000000.000555", thread_ts=parent)
        app.send(retried)
        app.settle()
        app.send(retried, retry=1)
        app.settle()
    assert len(app.replies()) == 1
    logged = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    expected = [f"event {json.loads(body)['event_id']} skipped: {why}" for body, why in skipped.items()]
    assert sorted(logged[:-1]) == sorted(expected)
    assert {r.levelno for r in caplog.records if r.getMessage() in expected} == {logging.DEBUG}
    retried_id = json.loads(retried)["event_id"]
    assert logged[-1] == (
        f"event {retried_id} (retry 1) skipped: message {CHANNEL} 1800000000.000555 already answered"
    )


@pytest.mark.parametrize(
    ("failure", "question", "apology"),
    [
        ({"error": "invalid_blocks"}, "有什么风险？", "抱歉，这个问题没能回答出来，请稍后再问一次。"),
        (
            {"status": 500},  # not sent again (it may be stored): the thread is read, then the apology
            "what are the risks here?",
            "Sorry, I could not answer that; please ask again in a moment.",
        ),
    ],
)
def test_an_answer_that_fails_after_the_claim_apologises_in_the_thread(
    app: App, failure: dict[str, Any], question: str, apology: str
) -> None:
    parent = post_pr_of_the_day(app)
    app.fake.fail("chat.postMessage", **failure)  # the answer's post
    app.send(event(question, ts="1800000000.000560", thread_ts=parent))
    app.settle()
    in_thread = app.replies()
    assert [c.status for c in in_thread][-1] == 200
    assert in_thread[-1].params["text"] == apology
    assert in_thread[-1].params["thread_ts"] == parent and in_thread[-1].params["channel"] == CHANNEL
    assert [m["text"] for m in app.fake.messages(CHANNEL) if m.get("thread_ts") == parent] == [apology]
    # Asking again (a new message) is answered.
    app.send(event(question, ts="1800000000.000561", thread_ts=parent))
    app.settle()
    answered = [m for m in app.fake.messages(CHANNEL) if m.get("thread_ts") == parent]
    assert len(answered) == 2 and answered[1]["text"] != apology


def test_a_broadcast_reply_is_answered(app: App) -> None:
    parent = post_pr_of_the_day(app)
    app.send(event("重点看什么？", ts="1800000000.000600", thread_ts=parent, subtype="thread_broadcast"))
    app.settle()
    assert len(app.replies()) == 1


def test_a_mention_about_speculative_decoding_is_answered_with_the_sm120_entry(app: App) -> None:
    ts = "1800000000.000700"
    text = f"<@{app.fake.bot_user_id}> speculative decoding 有哪些值得看的？"
    app.send(event(text, ts=ts, kind="app_mention"))
    answer = app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == ts)
    shown = all_text(answer.params)
    assert SM120_TITLE in shown and f"<{SM120_URL}|{SM120_TITLE}>" in shown
    assert "“speculative decoding 有哪些值得看的？” 的结果：第 1–1 条，共 1 条" in shown
    assert not any(
        e.get("action_id", "").startswith("more_results")
        for b in answer.params["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    )


def test_a_mention_with_no_match_says_so_and_suggests_topics(app: App) -> None:
    ts = "1800000000.000800"
    app.send(event(f"<@{app.fake.bot_user_id}> xyzzy plugh", ts=ts, kind="app_mention"))
    answer = app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == ts)
    shown = all_text(answer.params)
    assert "没有找到与 “xyzzy plugh” 相关的条目" in shown
    assert "可以试试" in shown


def test_a_question_with_slack_markup_cannot_make_the_bot_notify(app: App) -> None:
    parent = post_pr_of_the_day(app)
    text = f"<@{app.fake.bot_user_id}> <#C0GENERAL|general> 8 行 &lt;b&gt; 改了多少？ <!date^1392734382^{{date}}|x>"
    app.send(event(text, ts="1800000000.000900", thread_ts=parent))
    answer = app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent)
    shown = all_text(answer.params)
    assert "规模：" + PD_FOCUS in shown
    assert "<!" not in shown and "<@" not in shown


def test_a_bare_mention_in_the_thread_gets_the_summary_in_the_configured_language(app: App) -> None:
    parent = post_pr_of_the_day(app)
    app.send(
        event(f"<@{app.fake.bot_user_id}>", ts="1800000000.001000", thread_ts=parent, kind="app_mention")
    )
    answer = app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent)
    shown = all_text(answer.params)
    assert "修复 PD 热前缀下 P2P tier 无供给致 30s 超时重算" in shown
    assert "一句话：" in shown and "In short" not in shown


HELD_OUT = Path(__file__).parent / "digests-heldout"
# Chatter of our own, on top of the held-out set (tests/addressing_heldout.yaml).
MORE_CHATTER = ["lgtm", "👍👍", ":tada:", "收到，谢谢", "好的～", "thx!", "nice work 🚀", "+1", "赞", "ok 👌"]


def held_out_replies() -> dict[str, list[str]]:
    data = yaml.safe_load((Path(__file__).parent / "addressing_heldout.yaml").read_text(encoding="utf-8"))
    return {k: [str(t) for t in v] for k, v in data.items()}


def test_chatter_and_talk_between_people_get_no_answer(app: App) -> None:
    """Acknowledgements, emoji, +1s and replies addressed to somebody else are left alone."""
    parent = post_pr_of_the_day(app)
    replies = held_out_replies()
    texts = [*replies["chatter"], *MORE_CHATTER]
    texts += [f"<@U0ALICE> {t}" for t in replies["others"]]
    texts += ["<@U0ALICE> 你看下这个", "<!here> 有人跑过 benchmark 吗？", "<!subteam^S0TEAM> can you check?"]
    texts += [f"<@{app.fake.bot_user_id}> thanks!"]
    for n, text in enumerate(texts):
        app.send(event(text, ts=f"1800000000.002{n:03d}", thread_ts=parent))
    app.settle()
    assert app.replies() == []
    # The app was listening all along: a question after them is answered.
    app.send(event("有什么风险？", ts="1800000000.002999", thread_ts=parent))
    app.settle()
    assert len(app.replies()) == 1


def test_questions_and_requests_without_a_question_mark_are_answered(app: App) -> None:
    parent = post_pr_of_the_day(app)
    cases = {
        "explain the design": "设计思路",  # the note's design point: the differential test
        "讲讲测试": "差分测试",
        "what should I review": PD_FOCUS,
        "how big is the fix": "8 行",
    }
    for n, (text, part) in enumerate(cases.items()):
        ts = f"1800000000.003{n:03d}"
        app.send(event(text, ts=ts, thread_ts=parent))
        app.settle()
        answer = app.replies()[-1]
        assert len(app.replies()) == n + 1, text
        assert part in all_text(answer.params), (text, all_text(answer.params))
    every = held_out_replies()["questions"]
    for n, text in enumerate(every):
        app.send(event(text, ts=f"1800000000.004{n:03d}", thread_ts=parent))
    app.settle()
    assert len(app.replies()) == len(cases) + len(every)


def test_followups_mentions_answers_only_the_bots_mention(fake_slack: FakeSlack, tmp_path: Path) -> None:
    settings = settings_for(fake_slack).model_copy(update={"followups": "mentions"})
    store = SqlStore.open(f"sqlite:///{tmp_path / 'bot.db'}")
    bot = build(settings, store=store)
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    try:
        assert bot.daily is not None
        parent = bot.daily.run(CHANNEL, DAY).message_ts
        url = f"http://127.0.0.1:{server.port}/slack/events"
        for n, text in enumerate(["重点看什么？", f"<@{fake_slack.bot_user_id}> 有什么风险？"]):
            body = event(text, ts=f"1800000000.005{n:03d}", thread_ts=parent)
            assert (
                post(url, body, {**signed_headers(body), "Content-Type": "application/json"}).status_code
                == 200
            )
        assert bot.wait_idle(timeout=10)
        replies = [c for c in fake_slack.calls("chat.postMessage") if c.params.get("thread_ts")]
        assert len(replies) == 1 and "注意" in all_text(replies[0].params)
    finally:
        server.stop()
        bot.close()
        store.close()


def test_deliveries_racing_each_other_are_answered_once_per_message(app: App) -> None:
    parent = post_pr_of_the_day(app)
    text = f"<@{app.fake.bot_user_id}> 有什么风险？"
    bodies = []
    for n in range(8):
        ts = f"1800000000.0011{n:02d}"
        message = event(text, ts=ts, thread_ts=parent)
        mention = event(text, ts=ts, thread_ts=parent, kind="app_mention")
        bodies += [message, mention, message]  # the message also retried
    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(lambda body: app.send(body, retry=0), bodies))
    app.settle()
    assert len(app.replies()) == 8


def test_old_dedup_marks_are_pruned_at_most_once_an_hour(fake_slack: FakeSlack, tmp_path: Path) -> None:
    from slack_sdk import WebClient

    from chatbot.answers.answerer import Answerer
    from chatbot.digest.library import Library
    from chatbot.live import LiveIndex
    from chatbot.slack.handlers.followups import Delivery, FollowUps
    from chatbot.store.threads import InMemoryThreadRegistry

    store = SqlStore.open(f"sqlite:///{tmp_path / 'bot.db'}")
    now = [1000.0]
    library = Library.load(DIGESTS)
    follow_ups = FollowUps(
        Answerer(library),
        library.get,
        LiveIndex(library),
        InMemoryThreadRegistry(),
        store,
        "zh",
        keep_handled=dt.timedelta(0),
        clock=lambda: now[0],
    )
    client = WebClient(token="xoxb-test", base_url=fake_slack.api_url)

    def mention(n: int) -> Delivery:
        inner = {
            "type": "app_mention",
            "channel": "C1",
            "user": "U0A",
            "text": "<@UB> compile",
            "ts": f"9.{n}",
        }
        return Delivery(inner, f"EvP{n}", "UB")

    try:
        assert store.mark_handled("message:C0:1.0")
        follow_ups(mention(1), client)
        assert store.mark_handled("message:C0:1.0")  # pruned: the mark was gone
        now[0] += 60
        follow_ups(mention(2), client)
        assert not store.mark_handled("message:C0:1.0")  # a minute later: not pruned again
        now[0] += 3600
        follow_ups(mention(3), client)
        assert store.mark_handled("message:C0:1.0")
        assert len(fake_slack.calls("chat.postMessage")) == 3
    finally:
        store.close()


def test_thread_replies_as_people_write_them(app: App) -> None:
    """A quote of the bot's answer (Slack sends `&gt;`) before the question, two questions in one
    message, a colloquial question without a question mark: each answered once, in one message
    with the link once; the chatter in between gets nothing."""
    parent = post_pr_of_the_day(app)
    cases = [
        (f"&gt; 重点：{PD_FOCUS}\n有啥坑", ["nilig 的版本回溯分析"], [PD_FOCUS]),
        ("谁写的，什么时候合的", ["liranschour", "2026-08-19"], []),
        ("有意思", None, []),
        ("值不值得花时间读", ["值得精读"], []),
    ]
    answered = 0
    for n, (text, parts, absent) in enumerate(cases):
        app.send(event(text, ts=f"1800000000.005{n:03d}", thread_ts=parent))
        app.settle()
        if parts is None:
            assert len(app.replies()) == answered, text
            continue
        answered += 1
        assert len(app.replies()) == answered, text
        shown = all_text(app.replies()[-1].params)
        assert all(p in shown for p in parts) and not any(a in shown for a in absent), (text, shown)
        assert app.replies()[-1].params["text"].count("pull/52912") == 1, shown


def test_an_answer_whose_response_was_lost_is_not_posted_again(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """Slack stores the thread answer, then the connection drops before its answer arrives: the
    bot must not send it again (a second, identical reply); it logs the unknown outcome once."""
    parent = post_pr_of_the_day(app)
    app.fake.drop_after_acting("chat.postMessage")
    with caplog.at_level(logging.WARNING, logger="chatbot.slack.retries"):
        asked = app.fake.add_message(CHANNEL, "重点看什么？", user="U0ASKER", thread_ts=parent)
        app.send(event(asked["text"], ts=asked["ts"], thread_ts=parent))
        app.fake.wait_for("chat.postMessage", where=lambda c: c.params.get("thread_ts") == parent)
        app.settle()
    thread = [m for m in app.fake.messages(CHANNEL) if m.get("thread_ts") == parent and m.get("bot_id")]
    assert len(thread) == 1 and PD_FOCUS in all_text(thread[0])
    assert len(app.replies()) == 1
    unknown = [r.getMessage() for r in caplog.records if r.name == "chatbot.slack.retries"]
    assert len(unknown) == 1 and "chat.postMessage" in unknown[0] and "may have been posted" in unknown[0]
