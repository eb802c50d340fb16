"""Exactly one PR of the day per channel and day: races, Slack failures and crashes, both databases.

Real boundaries: `vllm-digest post-today` subprocesses, a real SQLite file or PostgreSQL schema,
and the fake Slack Web API on loopback, which counts what was actually posted.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.daily.jobs import daily_message
from chatbot.daily.poster import (
    DAILY_EVENT_TYPE,
    DailyPoster,
    Status,
    owner_is_dead,
)
from chatbot.digest.library import Library
from chatbot.slack.retries import slack_web_client
from chatbot.store import SqlStore
from tests.fakeslack import FakeSlack

ROOT = Path(__file__).resolve().parents[2]
DAY = "2026-09-01"
CHANNEL = "C0DAILY"


def cli_env(db_url: str, fake: FakeSlack, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": db_url,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_API_URL": fake.api_url,
        "DIGEST_DIR": str(ROOT / "digests"),
        "DAILY_CHANNELS": CHANNEL,
        "LANGUAGE": "en",
    }
    env.update(extra)
    return env


def post_today_process(env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "chatbot.cli", "post-today", "--channel", CHANNEL, "--date", DAY],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def post_today(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    process = post_today_process(env, cwd)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


# `post-today` as the CLI runs it, but the process exits right after Slack accepted the post and
# before the store records it, as a process killed at the worst moment would.
CRASH_EXIT_CODE = 75
CRASHING_POST_TODAY = """
import datetime as dt, os, sys
from chatbot.builders import build_store
from chatbot.daily.jobs import build_daily_poster
from chatbot.digest import Library
from chatbot.settings import load_settings

settings = load_settings()
library = Library.load(settings.digest_dir)
poster = build_daily_poster(
    settings, library, build_store(settings), after_post=lambda: os._exit(CRASH_EXIT_CODE)
)
print(poster.run(sys.argv[1], dt.date.fromisoformat(sys.argv[2])).line())
""".replace("CRASH_EXIT_CODE", str(CRASH_EXIT_CODE))


def post_today_crashing(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CRASHING_POST_TODAY, CHANNEL, DAY],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def daily_messages(fake: FakeSlack) -> list[dict[str, object]]:
    return [
        m for m in fake.messages(CHANNEL) if (m.get("metadata") or {}).get("event_type") == DAILY_EVENT_TYPE
    ]


def test_four_racing_processes_post_once(db_url: str, fake_slack: FakeSlack, tmp_path: Path) -> None:
    env = cli_env(db_url, fake_slack)  # a fresh database: the four race the migrations too
    processes = [post_today_process(env, tmp_path) for _ in range(4)]
    results = [(*p.communicate(timeout=60), p.returncode) for p in processes]
    assert [code for _, _, code in results] == [0, 0, 0, 0], results
    outputs = [out for out, _, _ in results]
    assert sum(": posted entry" in out for out in outputs) == 1, outputs
    assert all(": posted entry" in o or ": busy" in o or ": already posted" in o for o in outputs), outputs
    assert len(daily_messages(fake_slack)) == 1
    assert len(fake_slack.calls("chat.postMessage")) == 1
    store = SqlStore.open(db_url)
    row = store.daily_post(CHANNEL, dt.date.fromisoformat(DAY))
    assert row is not None and row.posted and row.message_ts == daily_messages(fake_slack)[0]["ts"]
    assert store.entry_for(CHANNEL, str(row.message_ts)) == row.entry_id
    store.close()
    rerun = post_today(env, tmp_path)
    assert rerun.returncode == 0 and ": already posted" in rerun.stdout
    assert len(fake_slack.calls("chat.postMessage")) == 1


def test_slack_500_on_the_post_is_not_sent_again_and_the_rerun_looks_then_posts_once(
    db_url: str, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """Slack may store a message before answering 500: the post is not resent (post-once), the
    claim is kept unknown, and the next run looks in the channel before it posts."""
    fake_slack.fail("chat.postMessage", status=500)
    env = cli_env(db_url, fake_slack)
    first = post_today(env, tmp_path)
    assert first.returncode == 1
    said = first.stdout + first.stderr
    assert "unknown" in said and "HTTP 500" in said and "looks for it before posting" in said
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [500]
    assert len(fake_slack.calls("conversations.history")) >= 1
    assert daily_messages(fake_slack) == []
    store = SqlStore.open(db_url)
    row = store.daily_post(CHANNEL, dt.date.fromisoformat(DAY))
    assert row is not None and not row.posted  # kept (unknown), not released
    second = post_today(env, tmp_path)
    assert second.returncode == 0 and ": posted entry" in second.stdout, second.stderr
    assert len(daily_messages(fake_slack)) == 1
    assert post_today(env, tmp_path).returncode == 0
    assert len(daily_messages(fake_slack)) == 1
    row = store.daily_post(CHANNEL, dt.date.fromisoformat(DAY))
    assert row is not None and row.posted
    store.close()


def test_crash_after_slack_accepted_then_rerun_does_not_post_again(
    db_url: str, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    env = cli_env(db_url, fake_slack)
    crashed = post_today_crashing(env, tmp_path)
    assert crashed.returncode == CRASH_EXIT_CODE, crashed.stderr
    assert len(daily_messages(fake_slack)) == 1
    store = SqlStore.open(db_url)
    row = store.daily_post(CHANNEL, dt.date.fromisoformat(DAY))
    assert row is not None and not row.posted  # the crash came before the record

    rerun = post_today(env, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert ": recovered" in rerun.stdout
    assert len(fake_slack.calls("chat.postMessage")) == 1
    history = fake_slack.calls("conversations.history")
    assert history and history[-1].params.get("include_all_metadata") in ("1", "true", True)
    message = daily_messages(fake_slack)[0]
    row = store.daily_post(CHANNEL, dt.date.fromisoformat(DAY))
    assert row is not None and row.posted and row.message_ts == message["ts"]
    assert message["metadata"]["event_payload"] == {"day": DAY, "entry_id": row.entry_id, "channel": CHANNEL}
    assert store.entry_for(CHANNEL, str(message["ts"])) == row.entry_id
    store.close()


def sqlite_poster(tmp_path: Path, fake_slack: FakeSlack, library: Library) -> tuple[SqlStore, DailyPoster]:
    """A daily poster on a fresh SQLite file, talking to the fake Slack with short backoff."""
    store = SqlStore.open(f"sqlite:///{tmp_path / 'bot.db'}")
    client = slack_web_client("xoxb-test", fake_slack.api_url, reports_unknown=True, backoff=0.01)
    return store, DailyPoster(store, lambda: library.entries, client, lambda e: daily_message(e, "en"))


@pytest.mark.parametrize("error", ["channel_not_found", "not_in_channel", "invalid_auth"])
def test_permanent_slack_errors_are_one_line_and_not_retried(
    error: str, fake_slack: FakeSlack, tmp_path: Path, seed_library: Library
) -> None:
    fake_slack.fail("chat.postMessage", error=error)
    store, poster = sqlite_poster(tmp_path, fake_slack, seed_library)
    result = poster.run(CHANNEL, dt.date(2026, 9, 1))
    assert result.status is Status.REFUSED
    assert "\n" not in result.line() and error in result.line() and "not retrying" in result.line()
    assert len(fake_slack.calls("chat.postMessage")) == 1
    assert store.daily_post(CHANNEL, dt.date(2026, 9, 1)) is None
    again = poster.run(CHANNEL, dt.date(2026, 9, 1))  # fixed setup: the next run posts
    assert again.status is Status.POSTED
    store.close()


@pytest.mark.parametrize(
    ("status", "error", "bare", "answered"),
    [
        (500, None, True, "Received a response in a non-JSON format"),
        (502, None, True, "Received a response in a non-JSON format"),
        (500, "an_error_code_slack_adds_later", False, "an_error_code_slack_adds_later"),
    ],
)
def test_a_5xx_on_the_post_is_an_unknown_outcome_looked_for_before_posting_again(
    status: int,
    error: str | None,
    bare: bool,
    answered: str,
    fake_slack: FakeSlack,
    tmp_path: Path,
    seed_library: Library,
) -> None:
    """Slack may store a message and still answer 5xx: the post is sent once, the claim kept as
    unknown; the next run finds nothing in the channel and posts, once."""
    fake_slack.fail("chat.postMessage", status=status, error=error, bare=bare)
    store, poster = sqlite_poster(tmp_path, fake_slack, seed_library)
    result = poster.run(CHANNEL, dt.date(2026, 9, 1))
    assert result.status is Status.UNKNOWN and result.retry_later
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [status]
    assert f"(HTTP {status}), the post may be stored" in result.detail
    assert "looks for it before posting" in result.detail and "\n" not in result.line()
    assert daily_messages(fake_slack) == []
    row = store.daily_post(CHANNEL, dt.date(2026, 9, 1))
    assert row is not None and not row.posted  # kept for the next run, which looks first
    again = poster.run(CHANNEL, dt.date(2026, 9, 1))
    assert again.status is Status.POSTED and len(daily_messages(fake_slack)) == 1
    store.close()


def test_rate_limit_is_retried_inside_the_run(
    fake_slack: FakeSlack, tmp_path: Path, seed_library: Library
) -> None:
    fake_slack.fail("chat.postMessage", status=429, retry_after=0)
    store, poster = sqlite_poster(tmp_path, fake_slack, seed_library)
    result = poster.run(CHANNEL, dt.date(2026, 9, 1))
    assert result.status is Status.POSTED
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [429, 200]
    assert len(daily_messages(fake_slack)) == 1
    store.close()


def test_today_prints_the_pick_and_why_without_posting(fake_slack: FakeSlack, tmp_path: Path) -> None:
    env = cli_env(f"sqlite:///{tmp_path / 'bot.db'}", fake_slack)
    run = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "today", "--date", DAY],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    first, why = run.stdout.splitlines()
    assert first.startswith(f"{CHANNEL} {DAY}: ")
    assert why.startswith("why: never posted here; 8 of 8 due")
    assert fake_slack.calls() == []
    posted = post_today(env, tmp_path)
    assert posted.returncode == 0
    again = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "today", "--date", DAY],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    entry_id = first.split(": ", 1)[1].split()[0]
    assert f"already posted {entry_id}" in again.stdout


def test_claim_owners_are_dead_only_when_provably_gone() -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    host = socket.gethostname()
    mine = f"{host}:{os.getpid()}:aaaa"
    assert owner_is_dead(f"{host}:{gone.stdout.strip()}:bbbb")  # exited (pids are not reused this fast)
    assert not owner_is_dead(f"{host}:1:cccc")  # alive
    assert not owner_is_dead(f"other-host:{gone.stdout.strip()}:bbbb")  # cannot tell: the lease decides
    assert owner_is_dead(mine)  # this pid, but not a claim this process holds: a restarted container
    assert not owner_is_dead(mine, {mine})


def test_slack_answering_after_the_timeout_is_not_posted_twice(
    db_url: str, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """Slack stores the post but answers after the client gave up: the run finds the post."""
    fake_slack.answer_late("chat.postMessage", 4.0)
    env = cli_env(db_url, fake_slack, SLACK_TIMEOUT="1")
    first = post_today(env, tmp_path)
    assert first.returncode == 0, first.stderr
    lines = [line for line in (first.stdout + first.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and ": posted entry" in lines[0] and "found the post" in lines[0]
    assert len(fake_slack.calls("chat.postMessage")) == 1
    again = post_today(env, tmp_path)
    assert again.returncode == 0 and "already posted" in again.stdout
    assert len(daily_messages(fake_slack)) == 1
    store = SqlStore.open(db_url)
    row = store.daily_post(CHANNEL, dt.date.fromisoformat(DAY))
    assert row is not None and row.posted and row.message_ts == daily_messages(fake_slack)[0]["ts"]
    store.close()


def test_an_unanswered_post_is_unknown_until_the_next_run_looks(
    db_url: str, fake_slack: FakeSlack, seed_library: Library
) -> None:
    """No answer and the history unreadable at that moment: the claim is kept, not released,
    and the next run finds the post instead of posting again."""
    fake_slack.answer_late("chat.postMessage", 4.0)
    # Unreadable for the look before posting and for the look after the post got no answer.
    fake_slack.fail("conversations.history", status=500, times=6)
    store = SqlStore.open(db_url)
    client = slack_web_client("xoxb-test", fake_slack.api_url, reports_unknown=True, backoff=0.01, timeout=1)
    poster = DailyPoster(store, lambda: seed_library.entries, client, lambda e: daily_message(e, "en"))
    day = dt.date.fromisoformat(DAY)
    first = poster.run(CHANNEL, day)
    assert first.status is Status.UNKNOWN and first.retry_later and not first.ok
    assert "\n" not in first.line() and "next run looks for it" in first.line()
    row = store.daily_post(CHANNEL, day)
    assert row is not None and not row.posted  # kept: a release would let the retry post again
    retry = poster.run(CHANNEL, day)
    assert retry.status is Status.RECOVERED, retry.line()
    assert len(fake_slack.calls("chat.postMessage")) == 1
    assert len(daily_messages(fake_slack)) == 1
    row = store.daily_post(CHANNEL, day)
    assert row is not None and row.posted and row.message_ts == daily_messages(fake_slack)[0]["ts"]
    store.close()


def test_a_refused_connection_is_retried_and_released(
    fake_slack: FakeSlack, tmp_path: Path, seed_library: Library
) -> None:
    """A request that never left (nothing listens) is safe to retry and to release."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/api/"
    store = SqlStore.open(f"sqlite:///{tmp_path / 'bot.db'}")
    client = slack_web_client("xoxb-test", closed, reports_unknown=True, backoff=0.01)
    poster = DailyPoster(store, lambda: seed_library.entries, client, lambda e: daily_message(e, "en"))
    result = poster.run(CHANNEL, dt.date.fromisoformat(DAY))
    assert result.status is Status.FAILED and "cannot reach Slack" in result.line()
    assert store.daily_post(CHANNEL, dt.date.fromisoformat(DAY)) is None
    store.close()
