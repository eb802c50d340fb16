"""The new-digest announcer under Slack faults, driven directly (a real store on SQLite or
PostgreSQL, the fake Slack over loopback, an injected clock): an announcement Slack stored but
answered after the client's timeout is not posted again by the next tick."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pytest

from chatbot.daily.announcer import ANNOUNCE_EVENT_TYPE, Announcer
from chatbot.daily.subscription import WEEKDAYS, Schedule, Subscription
from chatbot.digest import Entry
from chatbot.digest.library import Library
from chatbot.slack.retries import slack_web_client
from chatbot.slack.webapi import SlackMessage
from chatbot.store import SqlStore, SubscriptionStore
from tests.fakeslack import FakeSlack

CHANNEL = "C0ANNOUNCE"
START = dt.datetime(2026, 9, 1, 8, 0, tzinfo=dt.UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> dt.datetime:
        return self.now


def render(entries: Sequence[Entry], _subscription: Subscription) -> SlackMessage:
    return SlackMessage(f"{len(entries)} new entries", [])


def announcements(fake: FakeSlack) -> list[dict[str, object]]:
    return [
        m
        for m in fake.messages(CHANNEL)
        if (m.get("metadata") or {}).get("event_type") == ANNOUNCE_EVENT_TYPE
    ]


def announcer_with_new_batch(
    db_url: str, fake: FakeSlack, library: Library, clock: Clock
) -> tuple[Announcer, SqlStore]:
    """An announcer whose store saw all but the last two entries as the baseline: those two are new."""
    store = SqlStore.open(db_url)
    subscriptions = SubscriptionStore(store.engine)
    every = list(library.entries)
    shown: list[Entry] = every[:-2]
    subscription = Subscription(CHANNEL, Schedule(9, 30, WEEKDAYS, "UTC"))
    announcer = Announcer(
        subscriptions,
        lambda: shown,
        lambda: [subscription],
        lambda _s: frozenset(),
        slack_web_client("xoxb-test", fake.api_url, reports_unknown=True, backoff=0.01, timeout=1),
        render,
        clock=clock,
    )
    assert announcer.run() == []  # the baseline: not news
    shown[:] = every
    clock.now += dt.timedelta(minutes=1)
    return announcer, store


def test_an_announcement_slack_answered_late_is_not_posted_again(
    db_url: str, fake_slack: FakeSlack, seed_library: Library
) -> None:
    clock = Clock()
    announcer, store = announcer_with_new_batch(db_url, fake_slack, seed_library, clock)
    fake_slack.answer_late("chat.postMessage", 3.0)
    announcer.run()  # Slack stores the message, the client gives up after 1 s
    for _ in range(3):  # the next ticks
        clock.now += dt.timedelta(minutes=1)
        announcer.run()
    assert len(announcements(fake_slack)) == 1
    assert len(fake_slack.calls("chat.postMessage")) == 1
    store.close()


def test_an_unanswered_announcement_not_yet_in_the_history_is_found_by_the_next_tick(
    db_url: str, fake_slack: FakeSlack, seed_library: Library
) -> None:
    """No answer, and the history unreadable at that moment: the claim is kept (not released),
    so the next tick looks again and records the post instead of posting a second one."""
    clock = Clock()
    announcer, store = announcer_with_new_batch(db_url, fake_slack, seed_library, clock)
    fake_slack.answer_late("chat.postMessage", 3.0)
    fake_slack.fail("conversations.history", status=500, times=3)
    assert announcer.run() == []
    subscriptions = SubscriptionStore(store.engine)
    assert subscriptions.announced(CHANNEL) == set()  # not recorded as posted
    clock.now += dt.timedelta(minutes=1)
    recovered = announcer.run()
    posted = announcements(fake_slack)
    assert len(posted) == 1 and len(fake_slack.calls("chat.postMessage")) == 1
    assert [(a.channel, a.message_ts) for a in recovered] == [(CHANNEL, posted[0]["ts"])]
    assert len(subscriptions.announced(CHANNEL)) == 1
    clock.now += dt.timedelta(minutes=1)
    assert announcer.run() == []
    assert len(fake_slack.calls("chat.postMessage")) == 1
    store.close()


@pytest.mark.parametrize(
    "error", ["channel_not_found", "not_in_channel", "is_archived", "invalid_blocks", "msg_too_long"]
)
def test_an_announcement_slack_refuses_for_good_is_given_up_with_one_line(
    db_url: str, fake_slack: FakeSlack, seed_library: Library, error: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A refusal no retry can fix (the bot removed from the channel, an archived channel, a message
    Slack will not take) is logged once, naming the error, and not tried again on every tick of
    the announcement window (a minute apart: 1440 posts and error lines a day)."""
    clock = Clock()
    announcer, store = announcer_with_new_batch(db_url, fake_slack, seed_library, clock)
    fake_slack.fail("chat.postMessage", error=error, times=10)
    for _ in range(4):
        assert announcer.run() == []
        clock.now += dt.timedelta(minutes=1)
    assert len(fake_slack.calls("chat.postMessage")) == 1
    assert announcements(fake_slack) == []
    refused = [r.getMessage() for r in caplog.records if error in r.getMessage()]
    assert len(refused) == 1 and "not retrying" in refused[0], refused
    assert SubscriptionStore(store.engine).announced(CHANNEL) == set()  # never marked posted
    store.close()


@pytest.mark.parametrize("status, error", [(200, "internal_error"), (200, "ratelimited"), (503, None)])
def test_an_announcement_slack_fails_for_now_is_tried_again_next_tick(
    db_url: str, fake_slack: FakeSlack, seed_library: Library, status: int, error: str | None
) -> None:
    """Slack's trouble of the moment (after the client's own retries) releases the claim: a later
    tick posts, once."""
    clock = Clock()
    announcer, store = announcer_with_new_batch(db_url, fake_slack, seed_library, clock)
    fake_slack.fail("chat.postMessage", status=status, error=error, times=3)
    done = []
    for _ in range(4):
        done += announcer.run()
        clock.now += dt.timedelta(minutes=1)
    assert [a.channel for a in done] == [CHANNEL]
    assert len(announcements(fake_slack)) == 1
    assert SubscriptionStore(store.engine).announced(CHANNEL) == {done[0].batch}
    store.close()
