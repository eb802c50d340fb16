"""A topic-filtered channel over days: the wired poster (real store, fake Slack) posts only entries
on the channel's topics while they last, and `vllm-digest today --channel C` says which and why."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

from chatbot.daily.poster import Status
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.conftest import DIGESTS, ROOT
from tests.fakeslack import FakeSlack
from tests.test_slack_http import settings_for

CHANNEL = "C0MULTIMODAL"
FIRST_DAY = dt.date(2026, 12, 1)


def today(db_url: str, day: dt.date) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": db_url,
        "DIGEST_DIR": str(DIGESTS),
    }
    run = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "today", "--channel", CHANNEL, "--date", day.isoformat()],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_over_eight_days_a_filtered_channel_gets_its_topics_while_they_last(
    fake_slack: FakeSlack, db_url: str, tmp_path: Path
) -> None:
    store = SqlStore.open(db_url)
    bot = build(settings_for(fake_slack, "en"), store=store)
    try:
        assert bot.subscriptions is not None and bot.daily is not None
        answer = bot.subscriptions.commands.subscribe("多模态 at 10:00 on daily", CHANNEL, "U0ALICE")
        assert "Done" in answer["text"]
        subscription = bot.subscriptions.store.get(CHANNEL)
        assert subscription is not None
        on_topic = bot.subscriptions.entries_on(subscription)
        assert 0 < len(on_topic) < 8  # the seed digest: some multimodal entries, not all

        first = today(db_url, FIRST_DAY)
        assert "why: on the channel's topics (multimodal)" in first

        posted: list[str] = []
        for n in range(8):
            day = FIRST_DAY + dt.timedelta(days=n)
            result = bot.daily.run(CHANNEL, day)
            assert result.status is Status.POSTED, result.line()
            assert result.entry_id is not None
            posted.append(result.entry_id)
        assert posted[0] in first  # `today` named the entry that was then posted
        assert set(posted[: len(on_topic)]) == on_topic  # only matching entries while they last
        assert not set(posted[len(on_topic) :]) & on_topic  # then the rest, no repeat
        assert len(set(posted)) == 8

        after = today(db_url, FIRST_DAY + dt.timedelta(days=len(on_topic)))
        assert "already posted" in after  # that day is done; the note is about the next pick
        later = today(db_url, FIRST_DAY + dt.timedelta(days=8))
        assert f"every entry on the channel's topics (multimodal) was posted ({len(on_topic)})" in later
        assert f"note: {CHANNEL} has had every entry on its topics (multimodal)" in later
    finally:
        bot.close()
