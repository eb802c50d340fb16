"""The HTTP server end to end: signed requests in, Slack Web API calls out (to the fake)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from chatbot.bot import Bot
from chatbot.live import LiveIndex
from chatbot.search.index import SearchResult
from chatbot.settings import Settings
from chatbot.slack.handlers.command import Searchable
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.wiring import build
from tests.conftest import DIGESTS
from tests.fakeslack import FakeSlack
from tests.slackrequests import (
    SIGNING_SECRET,
    all_text,
    button_body,
    buttons,
    command_body,
    post,
    signed_headers,
    wait_ready,
)

DEEPSTACK_TITLE = "新增 Qwen3-VL DeepStack 编译契约回归测试"
DEEPSTACK_URL = "https://github.com/vllm-project/vllm/pull/53529"


@dataclass
class Served:
    fake: FakeSlack
    bot: Bot
    url: str


def settings_for(fake: FakeSlack, language: str = "zh", **extra: Any) -> Settings:
    return Settings(
        _env_file=None,  # type: ignore[call-arg]
        slack_bot_token="xoxb-test",
        slack_signing_secret=SIGNING_SECRET,
        slack_api_url=fake.api_url,
        digest_dir=DIGESTS,
        language=language,  # type: ignore[arg-type]
        **extra,
    )


@pytest.fixture
def served(fake_slack: FakeSlack) -> Iterator[Served]:
    bot = build(settings_for(fake_slack))
    server = HttpServer(asgi_app(bot.app, bot.health), host="127.0.0.1", port=0).start()
    yield Served(fake_slack, bot, f"http://127.0.0.1:{server.port}/slack/events")
    server.stop()
    bot.close()


def test_compile_is_answered_with_the_deepstack_entry_and_its_pr_link(served: Served) -> None:
    response = post(served.url, command_body("compile", served.fake.response_url()))
    assert response.status_code == 200
    answer = response.json()
    assert answer["response_type"] == "ephemeral"
    shown = all_text(answer)
    assert DEEPSTACK_TITLE in shown
    assert f"<{DEEPSTACK_URL}|{DEEPSTACK_TITLE}>" in shown
    assert any(b.get("url") == DEEPSTACK_URL for b in buttons(answer))


def test_help_lists_the_subcommands(served: Served) -> None:
    for text in ("", "help"):
        answer = post(served.url, command_body(text, served.fake.response_url())).json()
        shown = all_text(answer)
        for sub in ("today", "latest", "topics", "help"):
            assert f"/vllm-digest {sub}" in shown


def test_wrong_signature_and_stale_timestamp_are_refused(served: Served) -> None:
    body = command_body("compile", served.fake.response_url())
    wrong = signed_headers(body, secret="not-the-secret")
    assert post(served.url, body, wrong).status_code == 401
    stale = signed_headers(body, timestamp=int(time.time()) - 600)
    assert post(served.url, body, stale).status_code == 401
    assert served.fake.calls("response") == []


def test_share_to_channel_posts_the_card_and_registers_the_thread(served: Served) -> None:
    answer = post(served.url, command_body("compile", served.fake.response_url("cmd"))).json()
    share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
    press = post(served.url, button_body(share, served.fake.response_url("press"), channel="C0SHARE"))
    assert press.status_code == 200

    posted = served.fake.wait_for("chat.postMessage")
    assert posted.params["channel"] == "C0SHARE"
    card = all_text(posted.params)
    assert DEEPSTACK_TITLE in card and DEEPSTACK_URL in card
    assert "讨论串里追问" in card
    assert "由 asker 分享" in card and "<@" not in card
    assert posted.params["metadata"]["event_payload"]["entry_id"] == share["value"]
    confirmation = served.fake.wait_for("response", where=lambda c: c.path.endswith("/press"))
    assert "已分享" in confirmation.params["text"]
    # The confirmation follows the registration.
    assert served.bot.threads.entry_for("C0SHARE", posted.response["ts"]) == share["value"]


def test_share_to_a_channel_without_the_bot_says_how_to_fix_it(served: Served) -> None:
    served.fake.fail("chat.postMessage", error="not_in_channel")
    answer = post(served.url, command_body("compile", served.fake.response_url())).json()
    share = buttons(answer)[0]
    post(served.url, button_body(share, served.fake.response_url("press")))
    notice = served.fake.wait_for("response", where=lambda c: c.path.endswith("/press"))
    assert "/invite" in notice.params["text"]


def test_more_results_shows_the_next_page(fake_slack: FakeSlack) -> None:
    bot = build(settings_for(fake_slack), page_size=2)
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    served = Served(fake_slack, bot, f"http://127.0.0.1:{server.port}/slack/events")
    try:
        check_more_results(served)
    finally:
        server.stop()
        bot.close()


def check_more_results(served: Served) -> None:
    query = next(
        q for q in ("multimodal", "修复", "值得精读") if served.bot.index.search(q, limit=2).total > 2
    )
    first = post(served.url, command_body(query, served.fake.response_url())).json()
    more = next(b for b in buttons(first) if b["action_id"].startswith("more_results"))
    post(served.url, button_body(more, served.fake.response_url("more")))
    page = served.fake.wait_for("response", where=lambda c: c.path.endswith("/more")).params
    assert page["replace_original"] is True
    first_titles = {b["value"] for b in buttons(first) if b["action_id"].startswith("share_entry")}
    next_titles = {b["value"] for b in buttons(page) if b["action_id"].startswith("share_entry")}
    assert next_titles and not next_titles & first_titles
    assert "第 3–" in all_text(page)


class BlockedIndex:
    """An index whose searches wait until the test releases them."""

    def __init__(self, inner: Searchable) -> None:
        self.inner = inner
        self.release = threading.Event()
        self.entered = threading.Event()

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        self.entered.set()
        assert self.release.wait(timeout=10)
        return self.inner.search(query, limit=limit, offset=offset)

    def topics(self) -> list[tuple[str, int]]:
        return self.inner.topics()


@dataclass
class Stalled:
    """A served bot whose index is `index`: its searches wait for the test to release them."""

    bot: Bot
    url: str
    index: BlockedIndex


@contextmanager
def stalled(fake: FakeSlack, kind: type[BlockedIndex], ack_budget: float) -> Iterator[Stalled]:
    """The bot served over HTTP with its index wrapped in `kind`; released, stopped and closed
    (unless the test closed it) afterwards."""
    made: list[BlockedIndex] = []

    def wrap(live: LiveIndex) -> BlockedIndex:
        made.append(kind(live))
        return made[0]

    bot = build(settings_for(fake), index=wrap, ack_budget=ack_budget)
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    try:
        yield Stalled(bot, f"http://127.0.0.1:{server.port}/slack/events", made[0])
    finally:
        made[0].release.set()
        server.stop()
        if not bot.closed.is_set():
            bot.close()


def test_a_slow_search_is_acknowledged_in_time_and_answered_later(fake_slack: FakeSlack) -> None:
    with stalled(fake_slack, BlockedIndex, ack_budget=0.2) as served:
        response = post(served.url, command_body("compile", fake_slack.response_url("slow")), timeout=3)
        assert response.status_code == 200
        assert served.index.entered.is_set() and not served.index.release.is_set()
        assert "正在搜索" in response.json()["text"]
        served.index.release.set()
        late = fake_slack.wait_for("response", where=lambda c: c.path.endswith("/slow"))
        assert DEEPSTACK_TITLE in all_text(late.params)


class FailingIndex(BlockedIndex):
    """An index whose searches fail, once the test releases them."""

    def search(self, query: str, limit: int = 5, offset: int = 0) -> SearchResult:
        self.entered.set()
        assert self.release.wait(timeout=10)
        raise RuntimeError("the index broke")


def test_a_failed_search_is_answered_with_the_error_line_in_time_or_late(fake_slack: FakeSlack) -> None:
    """A failure in time is the ack's error line; a late one is posted in the "searching…"
    line's place."""
    with stalled(fake_slack, FailingIndex, ack_budget=0.3) as served:
        served.index.release.set()
        in_time = post(served.url, command_body("compile", fake_slack.response_url("now")), timeout=3)
        assert in_time.status_code == 200 and "出错了" in in_time.json()["text"]
        served.index.release.clear()
        slow = post(served.url, command_body("kv cache", fake_slack.response_url("late")), timeout=3)
        assert "正在搜索" in slow.json()["text"]
        served.index.release.set()
        late = fake_slack.wait_for("response", where=lambda c: c.path.endswith("/late"))
        assert "出错了" in all_text(late.params) and late.params.get("replace_original") is True
        assert not [c for c in fake_slack.calls("response") if c.path.endswith("/now")]


def test_closing_the_bot_drains_an_answer_that_missed_the_ack(fake_slack: FakeSlack) -> None:
    """A late answer waits on the answer pool, so `close()` lets it finish and post."""
    with stalled(fake_slack, BlockedIndex, ack_budget=0.2) as served:
        response = post(served.url, command_body("compile", fake_slack.response_url("drained")), timeout=3)
        assert "正在搜索" in response.json()["text"]
        assert not served.bot.wait_idle(0.1)  # the late answer is pending on the pool
        threading.Timer(0.3, served.index.release.set).start()
        served.bot.close(drain=5.0)
        late = fake_slack.wait_for("response", where=lambda c: c.path.endswith("/drained"))
        assert DEEPSTACK_TITLE in all_text(late.params)


def test_healthz_answers(served: Served) -> None:
    health = httpx.get(served.url.replace("/slack/events", "/healthz"))
    assert health.status_code == 200
    assert health.json() == {"ok": True, "entries": 8, "errors": 0}


def test_serve_command_starts_http_mode_against_slack(fake_slack: FakeSlack, tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SLACK_")},
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake_slack.api_url,
        "DIGEST_DIR": str(DIGESTS),
    }
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "chatbot.cli", "serve", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        while line and "HTTP on port" not in line:
            line = process.stderr.readline()
        assert f"HTTP on port {port}" in line
        wait_ready(f"http://127.0.0.1:{port}")
        url = f"http://127.0.0.1:{port}/slack/events"
        answer = post(url, command_body("help", fake_slack.response_url())).json()
        assert "/vllm-digest latest" in all_text(answer)
        assert fake_slack.calls("auth.test")
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_subcommands_answer_in_the_configured_language(fake_slack: FakeSlack) -> None:
    bot = build(settings_for(fake_slack, language="en"))
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    url = f"http://127.0.0.1:{server.port}/slack/events"
    try:
        help_text = all_text(post(url, command_body("help", fake_slack.response_url())).json())
        assert "searches the digest by topic" in help_text
        latest = post(url, command_body("latest", fake_slack.response_url())).json()
        assert "Newest entries" in all_text(latest)
        shares = [b["value"] for b in buttons(latest) if b["action_id"].startswith("share_entry")]
        assert shares == ["bf9c0b4186", "5d680c482d", "588db5c1c7", "0e7c6e404a", "3f337515ce"]  # newest PRs
        assert "修复 MiniCPM-o 图像处理器复用串扰" in all_text(latest)
        today = all_text(post(url, command_body("today", fake_slack.response_url())).json())
        assert "PR of the day" in today and "use *Share to channel* to ask follow-ups" in today
        assert "Ask in this thread" not in today  # an ephemeral message has no thread
        topics = all_text(post(url, command_body("topics", fake_slack.response_url())).json())
        assert "Topics you can search for" in topics
        for topic in ("`frontend`", "`multimodal`", "`testing`", "`KV offload`"):  # the bundled digest's
            assert topic in topics
        nothing = all_text(post(url, command_body("xyzzy", fake_slack.response_url())).json())
        assert "No entry matches “xyzzy”" in nothing
    finally:
        server.stop()
        bot.close()


def test_share_survives_a_rate_limit_and_a_server_error_is_looked_for_not_resent(served: Served) -> None:
    """429: sent again after Retry-After. 500: Slack may have stored the card, so it is not sent
    again; the channel is read for it, and the sharer told when it is not there."""
    served.fake.fail("chat.postMessage", status=429, retry_after=0)
    answer = post(served.url, command_body("compile", served.fake.response_url())).json()
    post(served.url, button_body(buttons(answer)[0], served.fake.response_url("press")))
    confirmation = served.fake.wait_for("response", where=lambda c: c.path.endswith("/press"), timeout=10)
    assert "已分享" in confirmation.params["text"]
    assert [c.status for c in served.fake.calls("chat.postMessage")] == [429, 200]
    assert len(served.fake.messages("C0CHAN")) == 1
    served.fake.fail("chat.postMessage", status=500)
    post(served.url, button_body(buttons(answer)[0], served.fake.response_url("again"), channel="C0OTHER"))
    refused = served.fake.wait_for("response", where=lambda c: c.path.endswith("/again"), timeout=10)
    assert "internal_error" in refused.params["text"]
    assert [c.status for c in served.fake.calls("chat.postMessage")] == [429, 200, 500]
    assert served.fake.calls("conversations.history")  # looked for before saying it failed
    assert len(served.fake.messages("C0CHAN")) == 1 and served.fake.messages("C0OTHER") == []


def test_a_listener_that_raises_is_logged_in_one_line_by_our_error_handler(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    def explode() -> None:
        raise RuntimeError("listener exploded")

    served.bot.app.shortcut("explode")(explode)  # any listener of the app, failing
    payload = {"type": "shortcut", "callback_id": "explode", "trigger_id": "1.2", "team": {"id": "T1"}}
    payload |= {"user": {"id": "U0ASKER"}, "token": "legacy"}
    body = urlencode({"payload": json.dumps(payload)})
    with caplog.at_level(logging.DEBUG, logger="chatbot.slack.app"):
        response = post(served.url, body)
    assert response.status_code == 500
    errors = [r for r in caplog.records if r.name == "chatbot.slack.app" and r.levelno == logging.ERROR]
    assert [r.getMessage() for r in errors] == ["slack shortcut failed: RuntimeError: listener exploded"]
    assert errors[0].exc_info is None  # one line; the traceback is at DEBUG
    traced = [r for r in caplog.records if r.name == "chatbot.slack.app" and r.levelno == logging.DEBUG]
    assert traced and traced[0].exc_info is not None


@pytest.mark.parametrize("text", ["payload attention", "payload=compile", "compile payload"])
def test_a_command_whose_text_holds_the_word_payload_is_answered(served: Served, text: str) -> None:
    """Bolt's own body parser takes any form body holding "payload" for an interactivity
    payload and dispatches an empty request: the command must still reach its listener."""
    response = post(served.url, command_body(text, served.fake.response_url()))
    assert response.status_code == 200
    answer = response.json()
    assert answer["response_type"] == "ephemeral"
    shown = all_text(answer)
    assert f"“{text}”" in shown  # the header names what was asked: the listener got the text
    assert "attention" in text or DEEPSTACK_TITLE in shown


def test_a_share_whose_response_was_lost_is_posted_once(served: Served) -> None:
    """Slack posts the shared card, then the connection drops unanswered: exactly one card in the
    channel, not a second one from a blind retry."""
    answer = post(served.url, command_body("compile", served.fake.response_url("cmd"))).json()
    share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
    served.fake.drop_after_acting("chat.postMessage")
    post(served.url, button_body(share, served.fake.response_url("press"), channel="C0LOST"))
    told = served.fake.wait_for("response", where=lambda c: c.path.endswith("/press"), timeout=10)
    assert served.bot.wait_idle(timeout=10)
    shared = served.fake.messages("C0LOST")
    assert len(shared) == 1 and DEEPSTACK_TITLE in all_text(shared[0])
    assert len(served.fake.calls("chat.postMessage")) == 1
    # Found in the channel: the sharer is told it is shared and its thread takes follow-ups.
    assert "已分享" in told.params["text"]
    assert served.bot.threads.entry_for("C0LOST", shared[0]["ts"]) == share["value"]
