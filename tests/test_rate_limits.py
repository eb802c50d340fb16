"""Slack's rate limits over the real boundaries: the fake Slack answers 429 with Retry-After per
channel and method (`FakeSlack.rate_limit`) and counts every call that came before a Retry-After
was over (`early_calls`: must stay 0); signed events go to the bot over HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from chatbot.slack.ratelimits import RateLimits
from chatbot.slack.retries import slack_web_client
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.wiring import Bot, build
from tests.fakeslack import BOT_USER_ID, FakeSlack
from tests.slackrequests import event_body, post, signed_headers
from tests.test_followups_http import settings_for

POST = "chat.postMessage"


def test_a_429_holds_its_channel_and_method_for_every_client_and_no_other(fake_slack: FakeSlack) -> None:
    """Two clients on one RateLimits (the bot's answers and its jobs): after the 429 in C1 neither
    calls C1 before Retry-After; C2 is not held meanwhile; every message is posted once."""
    fake_slack.rate_limit(POST, every=1.0, retry_after=2)
    limits = RateLimits()
    answers = slack_web_client("xoxb-test", fake_slack.api_url, limits=limits)
    jobs = slack_web_client("xoxb-test", fake_slack.api_url, limits=limits, reports_unknown=True)
    answers.chat_postMessage(channel="C1", text="first")
    posting = [
        threading.Thread(target=client.chat_postMessage, kwargs={"channel": "C1", "text": text})
        for client, text in ((answers, "second"), (jobs, "third"))
    ]
    for thread in posting:
        thread.start()
    fake_slack.wait_for(POST, where=lambda c: c.status == 429)
    jobs.chat_postMessage(channel="C2", text="elsewhere")
    assert limits.remaining("C1", POST) > 0  # C2 went through while C1 was held
    for thread in posting:
        thread.join(timeout=15)
    assert sorted(m["text"] for m in fake_slack.messages("C1")) == ["first", "second", "third"]
    assert [m["text"] for m in fake_slack.messages("C2")] == ["elsewhere"]
    assert fake_slack.early_calls() == []
    limited = [c for c in fake_slack.calls(POST) if c.status == 429]
    assert limited and all(c.params["channel"] == "C1" for c in limited)


@dataclass
class Served:
    fake: FakeSlack
    bot: Bot
    server: HttpServer

    def send(self, inner: dict[str, object]) -> None:
        body = event_body(inner)
        headers = {**signed_headers(body), "Content-Type": "application/json"}
        assert post(f"http://127.0.0.1:{self.server.port}/slack/events", body, headers).status_code == 200

    def posted(self, channel: str) -> list[str]:
        return [
            str(c.params.get("thread_ts") or "")
            for c in self.fake.calls(POST)
            if c.status == 200 and c.params["channel"] == channel
        ]


@pytest.fixture
def served(fake_slack: FakeSlack) -> Iterator[Served]:
    bot = build(settings_for(fake_slack))
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    yield Served(fake_slack, bot, server)
    server.stop()
    bot.close()


def mention(channel: str, user: str, ts: str) -> dict[str, object]:
    return {
        "type": "app_mention",
        "channel": channel,
        "user": user,
        "text": f"<@{BOT_USER_ID}> compile",
        "ts": ts,
    }


def dm(channel: str, user: str, ts: str) -> dict[str, object]:
    return {
        "type": "message",
        "channel_type": "im",
        "channel": channel,
        "user": user,
        "text": "compile",
        "ts": ts,
    }


def test_one_person_flooding_does_not_starve_a_question_in_a_quiet_channel(served: Served) -> None:
    """12 mentions and 12 DMs from one person against one post per second per channel; another
    person's mention in a quiet channel is answered at once, before the flood is, and no call
    goes to a held channel before its Retry-After is over; every message is answered once."""
    served.fake.rate_limit(POST, every=1.0, retry_after=2)
    for n in range(12):
        served.send(mention("C0FLOOD", "U0FLOOD", f"1800000000.{n:06d}"))
        served.send(dm("D0FLOOD", "U0FLOOD", f"1800000001.{n:06d}"))
    served.fake.wait_for(POST, where=lambda c: c.status == 429)
    served.send(mention("C0QUIET", "U0QUIET", "1800000002.000001"))
    served.fake.wait_for(
        POST, timeout=3, where=lambda c: c.params["channel"] == "C0QUIET" and c.status == 200
    )
    flood_answered = len(served.posted("C0FLOOD")) + len(served.posted("D0FLOOD"))
    assert flood_answered < 24  # the quiet question did not wait behind the flood
    assert served.bot.wait_idle(timeout=60)
    assert sorted(served.posted("C0FLOOD")) == [f"1800000000.{n:06d}" for n in range(12)]
    assert len(served.posted("D0FLOOD")) == 12 and len(served.posted("C0QUIET")) == 1
    assert served.fake.early_calls() == []
