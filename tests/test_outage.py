"""Nothing lost while the database is away: questions, direct messages, Share presses and the PR
of the day during a real outage.

Real boundaries: a PostgreSQL of the test's own (tests/privatepg.py) that the test stops and
starts, SQLite on a real full file system (a tmpfs the test mounts; skipped where it cannot) and
a SQLite file deleted under the bot, the real HTTP server with signed requests, the fake Slack.
Every wait is on a condition with a timeout (the outage queue's, the fake Slack's), never a sleep.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from chatbot.bot import Bot
from chatbot.daily.poster import DAILY_EVENT_TYPE, Status
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import OutageQueue, SqlStore
from chatbot.wiring import build
from tests.conftest import drop_postgres_schema, fresh_postgres_schema
from tests.fakeslack import Call, FakeSlack
from tests.privatepg import PrivatePostgres, postgres_binaries
from tests.slackrequests import all_text, button_body, event_body, post
from tests.test_slack_http import settings_for

CHANNEL = "C0DAILY"
DAY = dt.date(2026, 11, 30)
ENTRY = "51badd0821"
TOLD = "my database was unavailable for too long"


@pytest.fixture(scope="module")
def cluster() -> Iterator[PrivatePostgres]:
    binaries = postgres_binaries()
    if binaries is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    server = PrivatePostgres(binaries)
    yield server
    server.close()


@pytest.fixture
def pg_url(cluster: PrivatePostgres) -> Iterator[str]:
    """A fresh schema on the private server, which is running when the test starts."""
    if not cluster.running():
        cluster.start()
    url, schema = fresh_postgres_schema(cluster.url)
    yield url
    if not cluster.running():
        cluster.start()
    drop_postgres_schema(cluster.url, schema)


@dataclass
class Served:
    """The bot on a store, behind the real HTTP server."""

    fake: FakeSlack
    url: str
    store: SqlStore = field(init=False)
    bot: Bot = field(init=False)
    server: HttpServer = field(init=False)

    def __post_init__(self) -> None:
        self.store = SqlStore.open(self.url)
        self.bot = build(settings_for(self.fake, "en", daily_channels=[CHANNEL]), store=self.store)
        ready = self.bot.readiness
        self.server = HttpServer(
            asgi_app(self.bot.app, self.bot.health, ready=ready), host="127.0.0.1", port=0
        )
        self.server.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def outage(self) -> OutageQueue:
        assert self.bot.outage is not None
        return self.bot.outage

    def send(self, body: str) -> None:
        assert post(f"{self.base}/slack/events", body, timeout=10).status_code == 200

    def ask(self, text: str, ts: str, thread_ts: str, **extra: Any) -> None:
        event = {"type": "message", "channel": CHANNEL, "channel_type": "channel", "user": "U0ASKER"}
        self.send(event_body({**event, "text": text, "ts": ts, "thread_ts": thread_ts, **extra}))

    def readyz(self) -> httpx.Response:
        return httpx.get(f"{self.base}/readyz", timeout=10)

    def post_today(self) -> str:
        assert self.bot.daily is not None
        result = self.bot.daily.run(CHANNEL, DAY)
        assert result.status is Status.POSTED and result.message_ts, result.line()
        return result.message_ts

    def close(self) -> None:
        self.server.stop()
        self.bot.close()
        self.store.close()


@pytest.fixture
def served_pg(fake_slack: FakeSlack, pg_url: str) -> Iterator[Served]:
    served = Served(fake_slack, pg_url)
    yield served
    served.close()


def in_thread(fake: FakeSlack, thread: str, channel: str = CHANNEL) -> list[Call]:
    return [
        c
        for c in fake.calls("chat.postMessage")
        if c.params.get("thread_ts") == thread and c.params.get("channel") == channel and c.status == 200
    ]


def daily_posts(fake: FakeSlack) -> list[dict[str, Any]]:
    return [
        m for m in fake.messages(CHANNEL) if (m.get("metadata") or {}).get("event_type") == DAILY_EVENT_TYPE
    ]


def lost_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "lost a" in r.getMessage()]


def test_questions_dms_and_shares_during_a_postgres_outage_are_answered_after_it(
    served_pg: Served, cluster: PrivatePostgres, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    served, fake = served_pg, served_pg.fake
    parent = served.post_today()  # this process registered it: known without the database
    other = "1800000000.000001"  # registered by another replica: only the database knows it
    with contextlib.closing(SqlStore.open(served.url, upgrade=False)) as replica:
        replica.register(CHANNEL, other, ENTRY)
    assert served.readyz().status_code == 200

    cluster.stop()
    unready = served.readyz()
    assert unready.status_code == 503 and "DATABASE_URL" in unready.json()["store"]
    served.ask("what should I focus on?", "1800000001.000001", parent)
    served.ask("who should read this?", "1800000001.000002", other)
    dm = {"type": "message", "channel": "D0DM", "channel_type": "im", "user": "U0ASKER"}
    served.send(event_body({**dm, "text": "compile", "ts": "1800000001.000003"}))
    share = {"action_id": f"share_entry:{ENTRY}", "value": ENTRY}
    served.send(button_body(share, fake.response_url("share"), channel="C0SHARE"))
    assert served.outage.wait_held(4, timeout=30), served.outage.status()
    assert served.bot.wait_idle(10)
    assert len(fake.calls("chat.postMessage")) == 1  # the PR of the day only: nothing answered yet
    assert "held until the database is back" in served.outage.status()

    cluster.start()
    assert served.outage.wait_empty(timeout=60), served.outage.status()
    answers = [in_thread(fake, parent), in_thread(fake, other)]
    assert [len(a) for a in answers] == [1, 1], [c.params for a in answers for c in a]
    assert all(TOLD not in all_text(a[0].params) for a in answers)
    dm_answers = [c for c in fake.calls("chat.postMessage") if c.params.get("channel") == "D0DM"]
    assert len(dm_answers) == 1 and "compile" in all_text(dm_answers[0].params).lower()
    shared = [m for m in fake.messages("C0SHARE") if (m.get("metadata") or {}).get("event_type")]
    assert len(shared) == 1
    told = fake.wait_for("response", where=lambda c: c.path.endswith("/share"), timeout=10)
    assert told.params["text"] == "Shared to the channel."
    assert served.store.entry_for("C0SHARE", str(shared[0]["ts"])) == ENTRY
    assert served.readyz().status_code == 200
    assert lost_lines(caplog) == []
    assert any("holding" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_an_outage_longer_than_the_limit_tells_each_asker_once(
    served_pg: Served, cluster: PrivatePostgres, caplog: pytest.LogCaptureFixture
) -> None:
    served, fake = served_pg, served_pg.fake
    parent = served.post_today()
    served.outage.max_age = 0.5
    cluster.stop()
    # A reply that mentions the bot arrives twice (message and app_mention): one word back.
    text = f"<@{fake.bot_user_id}> what are the risks?"
    served.ask(text, "1800000002.000001", parent)
    mention = {"type": "app_mention", "channel": CHANNEL, "user": "U0ASKER", "text": text}
    served.send(event_body({**mention, "ts": "1800000002.000001", "thread_ts": parent}))
    dm = {"type": "message", "channel": "D0DM", "channel_type": "im", "user": "U0ASKER"}
    served.send(event_body({**dm, "text": "compile", "ts": "1800000002.000002"}))
    share = {"action_id": f"share_entry:{ENTRY}", "value": ENTRY}
    served.send(button_body(share, fake.response_url("share"), channel="C0SHARE"))

    told = fake.wait_for("chat.postMessage", where=lambda c: TOLD in str(c.params.get("text")), timeout=30)
    assert told.params["thread_ts"] == parent
    fake.wait_for("response", where=lambda c: c.path.endswith("/share"), timeout=30)
    assert served.outage.wait_empty(timeout=30)
    assert served.bot.wait_idle(10)
    cluster.start()
    assert served.readyz().status_code == 200
    assert [c.params["text"] for c in in_thread(fake, parent)] == [told.params["text"]]
    dm_said = [c.params["text"] for c in fake.calls("chat.postMessage") if c.params.get("channel") == "D0DM"]
    assert len(dm_said) == 1 and TOLD in dm_said[0]
    presses = [c.params["text"] for c in fake.calls("response") if c.path.endswith("/share")]
    assert presses == ["Sharing failed; my database was unavailable for too long. Please try again later."]
    assert fake.messages("C0SHARE") == []
    given_up = [r.getMessage() for r in caplog.records if r.getMessage().startswith("gave up")]
    assert len(given_up) == 4, given_up  # the message, its app_mention, the DM, the press: one line each
    assert all(
        r.levelno < logging.ERROR for r in caplog.records if r.name == "chatbot.slack.handlers.followups"
    )


def test_the_pr_of_the_day_posted_while_the_database_goes_away_is_recorded_once_it_is_back(
    served_pg: Served, cluster: PrivatePostgres
) -> None:
    served, fake = served_pg, served_pg.fake
    daily = served.bot.daily
    assert daily is not None
    daily.after_post = cluster.stop  # the database goes away between Slack's answer and the record
    result = daily.run(CHANNEL, DAY)
    assert result.status is Status.POSTED and "recorded once the database is back" in result.line()
    ts = str(result.message_ts)
    served.ask("what should I focus on?", "1800000003.000001", ts)  # routed from memory, held
    assert served.outage.wait_held(3, timeout=30), served.outage.status()  # record, thread, question
    assert daily.run(CHANNEL, DAY).status is Status.FAILED  # the database is still away: no post

    daily.after_post = None
    cluster.start()
    assert served.outage.wait_empty(timeout=60), served.outage.status()
    row = served.store.daily_post(CHANNEL, DAY)
    assert row is not None and row.posted and row.message_ts == ts and row.entry_id == result.entry_id
    assert served.store.entry_for(CHANNEL, ts) == result.entry_id
    assert len(in_thread(fake, ts)) == 1
    assert daily.run(CHANNEL, DAY).status is Status.ALREADY_POSTED
    restarted = Served(fake, served.url)  # a restart the same day
    try:
        assert restarted.bot.daily is not None
        assert restarted.bot.daily.run(CHANNEL, DAY).status is Status.ALREADY_POSTED
    finally:
        restarted.close()
    assert len(daily_posts(fake)) == 1


def test_a_restart_before_the_database_is_back_finds_the_post_and_does_not_post_again(
    fake_slack: FakeSlack, pg_url: str, cluster: PrivatePostgres
) -> None:
    first = Served(fake_slack, pg_url)
    assert first.bot.daily is not None
    first.bot.daily.after_post = cluster.stop
    assert first.bot.daily.run(CHANNEL, DAY).status is Status.POSTED
    first.close()  # shut down with the record still held
    cluster.start()
    second = Served(fake_slack, pg_url)
    try:
        assert second.bot.daily is not None
        again = second.bot.daily.run(CHANNEL, DAY)
        assert again.status is Status.RECOVERED, again.line()
        row = second.store.daily_post(CHANNEL, DAY)
        assert row is not None and row.posted and row.message_ts == again.message_ts
    finally:
        second.close()
    assert len(daily_posts(fake_slack)) == 1


def test_a_blip_at_fire_time_fails_the_run_for_a_retry_and_the_retry_posts_once(
    served_pg: Served, cluster: PrivatePostgres
) -> None:
    daily = served_pg.bot.daily
    assert daily is not None
    cluster.stop()
    failed = daily.run(CHANNEL, DAY)
    assert failed.status is Status.FAILED and failed.retry_later
    assert "the database is unavailable" in failed.line() and "will retry" in failed.line()
    assert served_pg.fake.calls("chat.postMessage") == []
    cluster.start()
    assert daily.run(CHANNEL, DAY).status is Status.POSTED
    assert daily.run(CHANNEL, DAY).status is Status.ALREADY_POSTED
    assert len(daily_posts(served_pg.fake)) == 1


# -- SQLite ------------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of the test's own (root can mount one; elsewhere the test skips)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Fill the file system to the last byte; the filler file, to delete for room."""
    filler = disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb", buffering=0) as out:
        while True:
            out.write(b"\0" * 4096)
    return filler


def test_sqlite_on_a_full_disk_is_unready_and_its_questions_are_answered_when_there_is_room(
    fake_slack: FakeSlack, small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    served = Served(fake_slack, f"sqlite:///{small_disk / 'bot.db'}")
    try:
        parent = served.post_today()
        filler = fill(small_disk)
        unready = served.readyz()
        assert unready.status_code == 503
        assert "the database takes no writes: database or disk is full" in unready.json()["store"]
        for n in range(5):
            served.ask(f"question {n}: what should I focus on?", f"1800000004.00000{n}", parent)
        assert served.outage.wait_held(5, timeout=30), served.outage.status()
        filler.unlink()
        assert served.outage.wait_empty(timeout=60), served.outage.status()
        replies = in_thread(fake_slack, parent)
        assert len(replies) == 5 and all(TOLD not in all_text(c.params) for c in replies)
        assert served.readyz().status_code == 200
        assert lost_lines(caplog) == []
    finally:
        served.close()


def test_a_deleted_sqlite_file_fails_closed_with_one_line(
    fake_slack: FakeSlack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database = tmp_path / "state" / "bot.db"
    served = Served(fake_slack, f"sqlite:///{database}")
    try:
        parent = served.post_today()
        served.outage.max_age = 0.5
        database.unlink()
        unready = served.readyz()
        assert unready.status_code == 503
        assert f"the database file {database} was deleted while the bot ran" in unready.json()["store"]
        served.ask("what should I focus on?", "1800000005.000001", parent)
        told = fake_slack.wait_for(
            "chat.postMessage", where=lambda c: TOLD in str(c.params.get("text")), timeout=30
        )
        assert told.params["thread_ts"] == parent
        assert served.bot.daily is not None
        assert served.bot.daily.run(CHANNEL, DAY + dt.timedelta(days=1)).status is Status.FAILED
        assert not database.exists()  # nothing was written to a new file at the path
        gone = [r for r in caplog.records if r.levelno == logging.ERROR and "was deleted" in r.getMessage()]
        assert len(gone) == 1, [r.getMessage() for r in gone]
        assert len(daily_posts(fake_slack)) == 1
    finally:
        served.close()
