"""One entry whose card Slack refuses (invalid_blocks, msg_too_long, …) must not stop a channel's
PR of the day: it is skipped in that channel, the next entry posted, exactly once a day, on both
databases and with two replicas sharing one.

Real boundaries: a real SQLite file or PostgreSQL schema, the fake Slack Web API on loopback,
which refuses every post of one entry's card the way Slack refuses bad blocks.
"""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from chatbot.daily.jobs import daily_message
from chatbot.daily.poster import DAILY_EVENT_TYPE, DailyPoster, Status
from chatbot.digest import Entry
from chatbot.digest.library import Library
from chatbot.slack.retries import slack_web_client
from chatbot.slack.webapi import SlackMessage
from chatbot.store import SqlStore
from tests.fakeslack import FakeSlack

CHANNEL = "C0DAILY"
DAY = dt.date(2026, 9, 1)


def daily_posts(fake: FakeSlack) -> dict[str, list[str]]:
    """The channel's PR-of-the-day messages as day -> entry ids."""
    by_day: dict[str, list[str]] = {}
    for message in fake.messages(CHANNEL):
        metadata = message.get("metadata") or {}
        if metadata.get("event_type") == DAILY_EVENT_TYPE:
            payload = metadata["event_payload"]
            by_day.setdefault(payload["day"], []).append(payload["entry_id"])
    return by_day


@pytest.mark.parametrize("error", ["invalid_blocks", "msg_too_long"])
def test_an_entry_slack_refuses_is_skipped_and_the_next_one_posted_once_a_day(
    error: str, db_url: str, fake_slack: FakeSlack, seed_library: Library, caplog: pytest.LogCaptureFixture
) -> None:
    edited: set[str] = set()

    def render(entry: Entry) -> SlackMessage:
        card = daily_message(entry, "en")
        return SlackMessage(card.text + " (edited)", card.blocks) if entry.id in edited else card

    def replica() -> tuple[SqlStore, DailyPoster]:
        store = SqlStore.open(db_url)
        client = slack_web_client("xoxb-test", fake_slack.api_url, reports_unknown=True, backoff=0.01)
        return store, DailyPoster(store, lambda: seed_library.entries, client, render)

    replicas = [replica(), replica()]
    first = replicas[0][1].pick(CHANNEL, DAY)
    assert first is not None
    refused = first.entry.id
    fake_slack.refuse("chat.postMessage", error, containing=f'"entry_id": "{refused}"')

    caplog.set_level(logging.ERROR, logger="chatbot.daily.poster")
    for offset in range(4):
        day = DAY + dt.timedelta(days=offset)
        # Both replicas run the day; the order alternates.
        results = [poster.run(CHANNEL, day) for _, poster in replicas[offset % 2 :] + replicas[: offset % 2]]
        assert [r.status for r in results] == [Status.POSTED, Status.ALREADY_POSTED], [
            r.line() for r in results
        ]
        assert results[0].entry_id != refused and results[1].entry_id == results[0].entry_id

    posts = daily_posts(fake_slack)
    assert sorted(posts) == [(DAY + dt.timedelta(days=i)).isoformat() for i in range(4)]
    assert all(len(ids) == 1 and refused not in ids for ids in posts.values()), posts
    tried = [c for c in fake_slack.calls("chat.postMessage") if refused in str(c.params.get("metadata"))]
    assert len(tried) == 1  # refused once, never tried again
    lines = [r.getMessage() for r in caplog.records if refused in r.getMessage()]
    assert len(lines) == 1 and error in lines[0] and "skipping" in lines[0], lines

    # Every replica (and `today`) leaves it out; once the entry's card changes it is picked again.
    assert all(poster.pick(CHANNEL, DAY).entry.id != refused for _, poster in replicas)  # type: ignore[union-attr]
    edited.add(refused)
    assert all(poster.pick(CHANNEL, DAY).entry.id == refused for _, poster in replicas)  # type: ignore[union-attr]
    for store, _ in replicas:
        store.close()


def test_a_channel_error_still_gives_up_without_skipping_entries(
    db_url: str, fake_slack: FakeSlack, seed_library: Library
) -> None:
    store = SqlStore.open(db_url)
    client = slack_web_client("xoxb-test", fake_slack.api_url, reports_unknown=True, backoff=0.01)
    poster = DailyPoster(store, lambda: seed_library.entries, client, lambda e: daily_message(e, "en"))
    first = poster.pick(CHANNEL, DAY)
    fake_slack.refuse("chat.postMessage", "is_archived", containing=CHANNEL)
    result = poster.run(CHANNEL, DAY)
    assert (
        result.status is Status.REFUSED and "is_archived" in result.line() and "not retrying" in result.line()
    )
    assert len(fake_slack.calls("chat.postMessage")) == 1
    assert store.refused_entries(CHANNEL) == set()
    assert poster.pick(CHANNEL, DAY) == first
    store.close()
