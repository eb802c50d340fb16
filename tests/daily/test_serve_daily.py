"""`vllm-digest serve` posts the PR of the day: a run missed minutes ago is caught up once, and a
restart the same day does not post again. Real subprocess, real SQLite file, fake Slack."""

from __future__ import annotations

import datetime as dt
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from zoneinfo import ZoneInfo

from chatbot.daily.poster import DAILY_EVENT_TYPE
from chatbot.store import SqlStore
from tests.fakeslack import FakeSlack

ROOT = Path(__file__).resolve().parents[2]
CHANNEL = "C0SERVE"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def zone_away_from_midnight() -> str:
    """A time zone where it is not just after midnight, so "3 minutes ago" is still today."""
    for name in ("UTC", "Asia/Shanghai", "America/New_York"):
        hour = dt.datetime.now(ZoneInfo(name)).hour
        if 1 <= hour <= 22:
            return name
    raise AssertionError("unreachable: three zones cannot all be near midnight")


class Serve:
    """A `vllm-digest serve` subprocess whose log lines can be waited for."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chatbot.cli", "serve", "--port", str(self.port)],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line)

    def wait_for_line(self, needle: str, timeout: float = 30) -> str:
        deadline = dt.datetime.now() + dt.timedelta(seconds=timeout)
        while True:
            left = (deadline - dt.datetime.now()).total_seconds()
            try:
                line = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                raise AssertionError(f"no log line with {needle!r}; got:\n{''.join(self.seen)}") from None
            self.seen.append(line)
            if needle in line:
                return line

    def wait_for_seen(self, needle: str, timeout: float = 30) -> str:
        """Like wait_for_line, but a line read while waiting for something else counts too."""
        for line in self.seen:
            if needle in line:
                return line
        return self.wait_for_line(needle, timeout)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def test_serve_catches_up_a_missed_run_once_and_not_after_restart(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    zone = zone_away_from_midnight()
    past = dt.datetime.now(ZoneInfo(zone)) - dt.timedelta(minutes=3)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "CACHE_DIR": str(tmp_path / "cache"),
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": "test-secret",
        "SLACK_API_URL": fake_slack.api_url,
        "DIGEST_DIR": str(ROOT / "digests"),
        "DAILY_CHANNELS": CHANNEL,
        "DAILY_CRON": f"{past.minute} {past.hour} * * *",
        "TIMEZONE": zone,
        "LANGUAGE": "en",
    }
    first = Serve(env, tmp_path)
    try:
        call = fake_slack.wait_for("chat.postMessage", timeout=30)
        first.wait_for_line(f"daily post {CHANNEL} {past.date().isoformat()}: posted")
    finally:
        first.stop()
    assert call.params["channel"] == CHANNEL
    assert call.params["metadata"]["event_type"] == DAILY_EVENT_TYPE
    assert call.params["metadata"]["event_payload"]["day"] == past.date().isoformat()
    header = call.params["blocks"][0]
    assert header["type"] == "header" and header["text"]["text"] == "PR of the day"
    assert "Ask in this thread" in str(call.params["blocks"][-1])

    second = Serve(env, tmp_path)
    try:
        second.wait_for_line(f"daily post {CHANNEL} {past.date().isoformat()}: already posted")
    finally:
        second.stop()
    assert len(fake_slack.calls("chat.postMessage")) == 1
    assert len([m for m in fake_slack.messages(CHANNEL) if m.get("metadata")]) == 1
    store = SqlStore.open(env["DATABASE_URL"])
    ts = fake_slack.messages(CHANNEL)[0]["ts"]
    assert store.entry_for(CHANNEL, ts) == call.params["metadata"]["event_payload"]["entry_id"]
    store.close()
