"""`/vllm-digest subscribe | unsubscribe | subscriptions` end to end: signed slash commands to the
real HTTP server, the confirmation in the channel at the fake Slack, the subscription in the store
(a SQLite file and PostgreSQL)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from chatbot.bot import Bot
from chatbot.daily.subscription import Schedule
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore, SubscriptionStore
from chatbot.wiring import build
from tests.fakeslack import Call, FakeSlack
from tests.slackrequests import all_text, command_body, post
from tests.test_slack_http import settings_for

CHANNEL = "C0KVCACHE"
USER = "U0ALICE"
ADMIN = "U0ADMIN"


@dataclass
class Served:
    fake: FakeSlack
    bot: Bot
    store: SqlStore
    server: HttpServer

    @property
    def subscriptions(self) -> SubscriptionStore:
        return SubscriptionStore(self.store.engine)

    def command(self, text: str, channel: str = CHANNEL, user: str = USER) -> dict[str, Any]:
        """The answer the asker sees: the ack, or the response-URL post when the ack was "searching"."""
        url = f"http://127.0.0.1:{self.server.port}/slack/events"
        key = f"r{len(self.fake.calls())}"
        response = post(url, command_body(text, self.fake.response_url(key), channel=channel, user=user))
        assert response.status_code == 200
        answer: dict[str, Any] = response.json()
        if all_text(answer).startswith("Searching"):
            late = self.fake.wait_for("response", where=lambda c: c.path.endswith(key), timeout=10)
            answer = late.params
        return answer

    def notices(self, channel: str = CHANNEL) -> list[Call]:
        return [c for c in self.fake.calls("chat.postMessage") if c.params.get("channel") == channel]


def serve(fake: FakeSlack, db_url: str, **extra: Any) -> Served:
    store = SqlStore.open(db_url)
    bot = build(settings_for(fake, "en", **extra), store=store)
    server = HttpServer(asgi_app(bot.app, bot.health), host="127.0.0.1", port=0).start()
    return Served(fake, bot, store, server)


@pytest.fixture
def served(fake_slack: FakeSlack, db_url: str) -> Iterator[Served]:
    app = serve(fake_slack, db_url, daily_channels=["C0SETTING"], admin_users=[ADMIN])
    yield app
    app.server.stop()
    app.bot.close()


def test_subscribe_stores_and_confirms_in_the_channel_then_list_and_unsubscribe(served: Served) -> None:
    answer = served.command("subscribe kv cache, offload at 10:00 on weekdays tz Europe/Berlin")
    assert answer["response_type"] == "ephemeral"
    assert "Done" in all_text(answer)

    stored = served.subscriptions.get(CHANNEL)
    assert stored is not None
    assert [t.key for t in stored.topics] == ["kv-cache", "kv-offload"]
    assert stored.schedule == Schedule(10, 0, frozenset(range(5)), "Europe/Berlin")
    assert stored.updated_by == USER and stored.announce and not stored.strict

    (notice,) = served.notices()
    said = all_text(notice.params)
    assert f"<@{USER}> subscribed this channel to the PR of the day" in said
    assert "on KV cache, KV offload, weekdays 10:00 Europe/Berlin" in said
    assert "new digest entries announced here" in said

    listed = all_text(served.command("subscriptions"))
    assert "This channel's PR of the day" in listed
    assert f"<#{CHANNEL}>" in listed and "KV cache, KV offload" in listed and f"<@{USER}>" in listed
    assert "C0SETTING" not in listed  # not an admin: this channel only

    served.command("subscribe on mon,thu 多模态")
    changed = served.subscriptions.get(CHANNEL)
    assert changed is not None
    assert [t.key for t in changed.topics] == ["kv-cache", "kv-offload", "multimodal"]
    assert changed.schedule == Schedule(10, 0, frozenset({0, 3}), "Europe/Berlin")
    assert "changed this channel's PR of the day" in all_text(served.notices()[-1].params)
    assert "Mon, Thu 10:00 Europe/Berlin" in all_text(served.notices()[-1].params)

    served.command("unsubscribe kv offload")
    fewer = served.subscriptions.get(CHANNEL)
    assert fewer is not None and [t.key for t in fewer.topics] == ["kv-cache", "multimodal"]

    assert "Done" in all_text(served.command("unsubscribe"))
    assert served.subscriptions.get(CHANNEL) is None
    assert f"<@{USER}> unsubscribed this channel" in all_text(served.notices()[-1].params)
    assert "no PR of the day" in all_text(served.command("subscriptions"))


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("subscribe kv cache at 25:00", "Nothing changed: not a time: '25:00'"),
        ("subscribe kv cache on someday", "Nothing changed: not a day: 'someday'"),
        ("subscribe kv cache tz Mars/Olympus", "Nothing changed: unknown time zone 'Mars/Olympus'"),
        ("subscribe kv cache frobnicate", "Nothing changed: I don't know the topic words frobnicate"),
        ("unsubscribe multimodal", "Nothing changed: this channel is not subscribed to multimodal"),
    ],
)
def test_bad_input_gets_one_line_and_changes_nothing(served: Served, text: str, line: str) -> None:
    served.command("subscribe kv cache at 09:00")
    before = served.subscriptions.get(CHANNEL)
    posts = len(served.fake.calls("chat.postMessage"))

    answer = served.command(text)

    shown = all_text(answer)
    assert line in shown
    assert len(answer["blocks"]) == 1 and "\n" not in answer["text"]
    assert served.subscriptions.get(CHANNEL) == before
    assert len(served.fake.calls("chat.postMessage")) == posts


def test_unsubscribing_a_topic_without_a_subscription_names_the_topic(served: Served) -> None:
    answer = served.command("unsubscribe kv cache")
    assert "Nothing changed: this channel is not subscribed to KV cache" in all_text(answer)
    assert served.subscriptions.get(CHANNEL) is None
    assert served.fake.calls("chat.postMessage") == []


def test_not_in_the_channel_says_how_to_invite_and_stores_nothing(served: Served) -> None:
    served.fake.fail("chat.postMessage", error="not_in_channel")
    answer = served.command("subscribe compile", channel="C0OUTSIDE")
    assert "/invite @vllm-digest" in all_text(answer)
    assert served.subscriptions.get("C0OUTSIDE") is None


def test_an_admin_sees_every_channel_including_daily_channels(served: Served) -> None:
    served.command("subscribe compile strict announce off")
    served.fake.users["U0OWNER"] = {"is_owner": True}
    for admin in (ADMIN, "U0OWNER"):
        listed = all_text(served.command("subscriptions", channel="C0ELSEWHERE", user=admin))
        assert "PR of the day subscriptions" in listed
        assert f"<#{CHANNEL}>" in listed and "torch.compile" in listed and "strict" in listed
        assert "no new-digest announcements" in listed
        assert "<#C0SETTING>" in listed and "DAILY_CRON `30 9 * * 1-5` Asia/Shanghai" in listed
        assert "DAILY_CHANNELS setting" in listed
    assert served.fake.calls("users.info")[-1].params["user"] == "U0OWNER"
    plain = all_text(served.command("subscriptions", channel="C0ELSEWHERE", user="U0NOBODY"))
    assert "no PR of the day" in plain and CHANNEL not in plain


def test_a_daily_channels_channel_cannot_be_unsubscribed_from_slack(served: Served) -> None:
    answer = served.command("unsubscribe", channel="C0SETTING")
    assert "DAILY_CHANNELS setting" in all_text(answer)
    served.command("subscribe multimodal", channel="C0SETTING")
    stored = served.subscriptions.get("C0SETTING")
    assert stored is not None and stored.schedule.time == "09:30"
    served.command("unsubscribe", channel="C0SETTING")
    notice = all_text(served.notices("C0SETTING")[-1].params)
    assert "still gets the PR of the day from the DAILY_CHANNELS setting" in notice


def test_the_daily_pick_of_a_subscribed_channel_is_on_its_topics(served: Served) -> None:
    served.command("subscribe 多模态 at 10:00")
    assert served.bot.daily is not None and served.bot.subscriptions is not None
    subscription = served.subscriptions.get(CHANNEL)
    assert subscription is not None
    pick = served.bot.daily.pick(CHANNEL, dt.date(2026, 12, 1))
    assert pick is not None and "on the channel's topics (multimodal)" in pick.reason
    assert pick.entry.id in served.bot.subscriptions.entries_on(subscription)


def test_today_in_a_channel_that_had_every_entry_on_its_topics_says_so(served: Served) -> None:
    served.command("subscribe 多模态")
    assert served.bot.daily is not None and served.bot.subscriptions is not None
    subscription = served.subscriptions.get(CHANNEL)
    assert subscription is not None
    on_topic = served.bot.subscriptions.entries_on(subscription)
    now = dt.datetime.now(ZoneInfo(subscription.schedule.zone)).date()

    first = all_text(served.command("today"))
    assert "PR of the day" in first and "every entry on its topics" not in first
    assert any(entry.title in first for entry in served.bot.library.entries if entry.id in on_topic)

    for n in range(len(on_topic), 0, -1):
        served.bot.daily.run(CHANNEL, now - dt.timedelta(days=n))
    shown = all_text(served.command("today"))
    assert "This channel has had every entry on its topics" in shown
    assert f"every entry on the channel's topics (multimodal) was posted ({len(on_topic)})" in shown
    assert not any(entry.title in shown for entry in served.bot.library.entries if entry.id in on_topic)


@pytest.fixture
def served_impatient(fake_slack: FakeSlack, db_url: str) -> Iterator[Served]:
    app = serve(fake_slack, db_url, slack_timeout=1)
    yield app
    app.server.stop()
    app.bot.close()


def test_a_confirmation_slack_answered_late_is_found_and_the_change_is_stored(
    served_impatient: Served,
) -> None:
    """Slack posts the confirmation but answers after the client gave up: the bot finds it in the
    channel, stores the change and says done, so the asker has no reason to subscribe again (a
    second confirmation); the next change is confirmed once more, once."""
    served = served_impatient
    served.fake.answer_late("chat.postMessage", 3.0)
    answer = served.command("subscribe compile at 10:00", channel="C0LATE")
    assert "Done" in all_text(answer), all_text(answer)
    stored = served.subscriptions.get("C0LATE")
    assert stored is not None and (stored.schedule.hour, stored.schedule.minute) == (10, 0)
    assert len(served.notices("C0LATE")) == 1 and len(served.fake.messages("C0LATE")) == 1


def test_a_confirmation_whose_response_was_lost_is_posted_once_and_the_change_stored(
    served: Served,
) -> None:
    """Slack posts the confirmation, then the connection drops before its answer: no second
    confirmation; the bot finds the first one in the channel and stores the change."""
    served.fake.drop_after_acting("chat.postMessage")
    answer = served.command("subscribe compile at 09:30", channel="C0DROP")
    assert "Done" in all_text(answer), all_text(answer)
    stored = served.subscriptions.get("C0DROP")
    assert stored is not None and (stored.schedule.hour, stored.schedule.minute) == (9, 30)
    assert len(served.notices("C0DROP")) == 1 and len(served.fake.messages("C0DROP")) == 1
