"""Slack's rate limits over the real boundaries: the fake Slack answers 429 with Retry-After per
channel and method (`FakeSlack.rate_limit`) and counts every call that came before a Retry-After
was over (`early_calls`: must stay 0); signed events go to the bot over HTTP."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from chatbot.bot import Bot
from chatbot.digest.library import Library
from chatbot.slack.ratelimits import RateLimits
from chatbot.slack.retries import slack_web_client
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.wiring import build
from tests.daily.test_announcer_faults import Clock, announcements, announcer_with_new_batch
from tests.fakeopenai import FakeModel, Reply
from tests.fakeslack import BOT_USER_ID, FakeSlack
from tests.slackrequests import all_text, event_body, post, signed_headers
from tests.test_followups_http import settings_for
from tests.test_model_answers import CHANNEL, GROUNDED_EN, ModelApp

POST = "chat.postMessage"
APOLOGIES = {
    "抱歉，这个问题没能回答出来，请稍后再问一次。",
    "Sorry, I could not answer that; please ask again in a moment.",
}


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
    held = fake_slack.wait_for(POST, where=lambda c: c.status == 429)
    jobs.chat_postMessage(channel="C2", text="elsewhere")
    # C2 went through while C1 was held: its one call arrived before C1's Retry-After was over.
    # (Read from the fake's clock: the client may register the hold after the fake answered.)
    elsewhere = fake_slack.wait_for(POST, where=lambda c: c.params.get("channel") == "C2")
    assert elsewhere.status == 200 and elsewhere.at < held.at + 2
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
    """8 mentions and 8 DMs from one person against one post per second per channel; another
    person's mention in a quiet channel is answered at once, before the flood is, and no call
    goes to a held channel before its Retry-After is over; every message is answered once."""
    served.fake.rate_limit(POST, every=1.0, retry_after=2)
    for n in range(8):
        served.send(mention("C0FLOOD", "U0FLOOD", f"1800000000.{n:06d}"))
        served.send(dm("D0FLOOD", "U0FLOOD", f"1800000001.{n:06d}"))
    served.fake.wait_for(POST, where=lambda c: c.status == 429)
    served.send(mention("C0QUIET", "U0QUIET", "1800000002.000001"))
    served.fake.wait_for(
        POST, timeout=3, where=lambda c: c.params["channel"] == "C0QUIET" and c.status == 200
    )
    flood_answered = len(served.posted("C0FLOOD")) + len(served.posted("D0FLOOD"))
    assert flood_answered < 16  # the quiet question did not wait behind the flood
    assert served.bot.wait_idle(timeout=60)
    assert sorted(served.posted("C0FLOOD")) == [f"1800000000.{n:06d}" for n in range(8)]
    assert len(served.posted("D0FLOOD")) == 8 and len(served.posted("C0QUIET")) == 1
    assert served.fake.early_calls() == []


def test_the_apology_for_a_rate_limited_answer_waits_for_retry_after(served: Served) -> None:
    """The answer is refused with 429 until the client gives up: the apology goes only once the
    last Retry-After is over, not right after the last 429."""
    served.fake.fail(POST, status=429, retry_after=1, times=4)  # the answer and its 3 resends
    served.send(mention("C0BUSY", "U0ASKER", "1800000003.000001"))
    apology = served.fake.wait_for(POST, timeout=15, where=lambda c: c.status == 200)
    limited = [c for c in served.fake.calls(POST) if c.status == 429]
    assert len(limited) == 4 and apology.params["text"] in APOLOGIES
    assert all(later.at - earlier.at >= 1.0 for earlier, later in itertools.pairwise([*limited, apology]))


def test_an_announcement_is_sent_again_after_its_retry_after(
    db_url: str, fake_slack: FakeSlack, seed_library: Library
) -> None:
    clock = Clock()
    announcer, store = announcer_with_new_batch(db_url, fake_slack, seed_library, clock)
    fake_slack.fail(POST, status=429, retry_after=2)
    announced = announcer.run()
    first, second = fake_slack.calls(POST)
    assert (first.status, second.status) == (429, 200) and second.at - first.at >= 2.0
    assert len(announcements(fake_slack)) == 1 and [a.message_ts for a in announced] == [
        second.response["ts"]
    ]
    store.close()


def test_a_rate_limited_final_update_is_sent_again_after_retry_after(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """The model's answer replaces the placeholder even when chat.update is refused with 429 more
    times than the client resends it: no placeholder left, no second message in the thread."""
    with FakeModel() as model:
        app = ModelApp(fake_slack, model.base_url, tmp_path / "bot.db")
        try:
            model.script(Reply(GROUNDED_EN, chunks=2))
            parent = app.pr_of_the_day()
            fake_slack.fail("chat.update", status=429, retry_after=1, times=5)
            app.ask("what should I focus on?", parent, "1800000000.000100")
            final = app.final_update()
            assert app.bot.wait_idle(10)
        finally:
            app.stop()
    updates = fake_slack.calls("chat.update")
    assert [c.status for c in updates] == [429] * 5 + [200] and "🤖" in all_text(final.params)
    assert all(later.at - earlier.at >= 1.0 for earlier, later in itertools.pairwise(updates))
    posts = app.thread_posts(parent)
    assert len(posts) == 1 and final.params["ts"] == posts[0].response["ts"]
    in_thread = [m for m in fake_slack.messages(CHANNEL) if m.get("thread_ts") == parent]
    assert len(in_thread) == 1 and "Focus on the 8 line fix" in all_text(in_thread[0])
    assert all_text(in_thread[0]) == all_text(updates[-1].params)
