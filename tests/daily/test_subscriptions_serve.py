"""Subscriptions across replicas: two `vllm-digest serve` processes on one database. A channel
subscribed through replica A is scheduled by replica B without a restart and gets one post; a new
digest file is announced once per subscribed channel, with a replica restarted in between.
Real subprocesses, signed slash commands, the fake Slack; waits on its calls and on log lines."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from chatbot.daily.announcer import ANNOUNCE_EVENT_TYPE
from chatbot.daily.poster import DAILY_EVENT_TYPE
from tests.daily.test_serve_daily import ROOT, Serve, zone_away_from_midnight
from tests.fakeslack import Call, FakeSlack
from tests.slackrequests import SIGNING_SECRET, all_text, buttons, command_body, post


def env_for(fake: FakeSlack, db_url: str, digest_dir: Path, zone: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": db_url,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake.api_url,
        "DIGEST_DIR": str(digest_dir),
        "TIMEZONE": zone,
        "LANGUAGE": "en",
        "RECONCILE_SECONDS": "1",
    }


class Replicas:
    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env = env
        self.cwd = cwd
        self.running: list[Serve] = []

    def start(self) -> Serve:
        replica = Serve(self.env, self.cwd)
        self.running.append(replica)
        replica.wait_for_line("HTTP on port")
        return replica

    def stop(self, replica: Serve) -> None:
        replica.stop()
        self.running.remove(replica)

    def stop_all(self) -> None:
        for replica in list(self.running):
            self.stop(replica)


@pytest.fixture
def replicas(fake_slack: FakeSlack, db_url: str, tmp_path: Path) -> Iterator[Replicas]:
    digests = tmp_path / "digests"
    digests.mkdir()
    for path in (ROOT / "digests").iterdir():
        shutil.copy(path, digests / path.name)
    group = Replicas(env_for(fake_slack, db_url, digests, zone_away_from_midnight()), tmp_path)
    yield group
    group.stop_all()


def cli(replicas: Replicas, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chatbot.cli", *args],
        env=replicas.env,
        cwd=replicas.cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def is_daily(call: Call, channel: str) -> bool:
    metadata = call.params.get("metadata") or {}
    return call.params.get("channel") == channel and metadata.get("event_type") == DAILY_EVENT_TYPE


def is_announcement(call: Call, channel: str) -> bool:
    metadata = call.params.get("metadata") or {}
    return call.params.get("channel") == channel and metadata.get("event_type") == ANNOUNCE_EVENT_TYPE


def test_a_subscription_made_through_one_replica_is_posted_once_by_the_two(
    fake_slack: FakeSlack, replicas: Replicas
) -> None:
    channel = "C0SUBSCRIBED"
    a, b = replicas.start(), replicas.start()
    zone = ZoneInfo(replicas.env["TIMEZONE"])
    now = dt.datetime.now(zone)
    at = (now + dt.timedelta(minutes=1 if now.second < 40 else 2)).replace(second=0, microsecond=0)

    body = command_body(f"subscribe at {at:%H:%M} on daily", fake_slack.response_url(), channel=channel)
    answer = post(f"http://127.0.0.1:{a.port}/slack/events", body, timeout=10)
    assert answer.status_code == 200

    expected = f"daily post {channel}: scheduled daily {at:%H:%M} {replicas.env['TIMEZONE']}"
    b.wait_for_line(expected, timeout=30)  # B read it from the store, no restart
    a.wait_for_seen(expected, timeout=30)
    confirmation = fake_slack.wait_for("chat.postMessage", where=lambda c: c.params.get("channel") == channel)
    assert f"daily {at:%H:%M}" in all_text(confirmation.params)

    daily = fake_slack.wait_for("chat.postMessage", where=lambda c: is_daily(c, channel), timeout=200)
    assert daily.params["metadata"]["event_payload"]["day"] == at.date().isoformat()
    outcome = f"daily post {channel} {at.date().isoformat()}:"
    lines = [a.wait_for_seen(outcome, timeout=60), b.wait_for_seen(outcome, timeout=60)]
    assert sum(": posted entry" in line for line in lines) == 1, lines
    assert len([c for c in fake_slack.calls("chat.postMessage") if is_daily(c, channel)]) == 1


NEW_DIGEST = """vllm-project/vllm

多模态编码器缓存按请求复用

值得精读。重点关注两点：一是多模态编码器输出缓存的键设计；二是跨请求复用时的失效时机。对维护多模态模型的工程师尤其有借鉴意义。

调度器新增优先级抢占

值得精读。重点关注抢占顺序与公平性的权衡。对调度器维护者尤其有借鉴意义。

MoE 专家并行的负载统计修正

值得精读。重点关注专家负载统计在多卡间的聚合方式。注意：修正改变了日志里的统计口径。
"""


def test_a_new_digest_file_is_announced_once_per_subscribed_channel(
    fake_slack: FakeSlack, replicas: Replicas
) -> None:
    for args in (
        ("subscribe", "C0ALL", "at", "09:00"),
        ("subscribe", "C0MULTIMODAL", "多模态", "on", "mon,thu"),
        ("subscribe", "C0QUIET", "announce", "off"),
    ):
        done = cli(replicas, *args)
        assert done.returncode == 0, done.stderr
    listed = json.loads(cli(replicas, "subscriptions", "--json").stdout)
    assert [(s["channel"], [t["key"] for t in s["topics"]], s["announce"]) for s in listed] == [
        ("C0ALL", [], True),
        ("C0MULTIMODAL", ["multimodal"], True),
        ("C0QUIET", [], False),
    ]

    a = replicas.start()
    a.wait_for_line("digest entries: baseline of 8 entries (not announced)")
    b = replicas.start()

    (Path(replicas.env["DIGEST_DIR"]) / "vllm-digest-2026-09.txt").write_text(NEW_DIGEST, encoding="utf-8")
    replicas.stop(b)  # one replica restarted while the new file is there
    b = replicas.start()

    everything = fake_slack.wait_for(
        "chat.postMessage", where=lambda c: is_announcement(c, "C0ALL"), timeout=60
    )
    multimodal = fake_slack.wait_for(
        "chat.postMessage", where=lambda c: is_announcement(c, "C0MULTIMODAL"), timeout=60
    )
    # Both replicas have been through the batch for both channels: posted it, or saw it posted.
    for replica in (a, b):
        for channel in ("C0ALL", "C0MULTIMODAL"):
            replica.wait_for_seen(f"announce {channel} batch", timeout=60)
    replicas.stop(a)  # and a restart after the announcement announces nothing again
    a = replicas.start()
    for channel in ("C0ALL", "C0MULTIMODAL"):
        a.wait_for_seen(f"announce {channel} batch", timeout=60)
        assert "already announced" in a.wait_for_seen(f"announce {channel} batch")

    shown = all_text(everything.params)
    assert "New in the digest" in shown and "3 new entries" in shown
    for title in ("多模态编码器缓存按请求复用", "调度器新增优先级抢占", "MoE 专家并行的负载统计修正"):
        assert title in shown
    assert len([x for x in buttons(everything.params) if x["action_id"].startswith("share_entry:")]) == 3
    only = all_text(multimodal.params)
    assert "on this channel's topics (multimodal)" in only and "多模态编码器缓存按请求复用" in only
    assert "调度器新增优先级抢占" not in only
    calls = fake_slack.calls("chat.postMessage")
    assert len([c for c in calls if is_announcement(c, "C0ALL")]) == 1
    assert len([c for c in calls if is_announcement(c, "C0MULTIMODAL")]) == 1
    # `announce off`: no announcement; its PR of the day still comes once its hour has passed today.
    quiet = [c for c in calls if c.params.get("channel") == "C0QUIET"]
    assert not [c for c in quiet if is_announcement(c, "C0QUIET")]
    assert all(str(c.params.get("text", "")).startswith("PR of the day") for c in quiet), quiet
