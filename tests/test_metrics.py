"""Metrics outside the request mix: Slack errors by method, daily outcomes, registries per bot,
the settings, and `serve` with METRICS_PORT and LOG_FORMAT=json."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from chatbot.observability import LibraryState, Metrics, count_slack_calls
from chatbot.settings import load_settings
from chatbot.slack.retries import slack_web_client
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.daily.test_serve_daily import ROOT, Serve, free_port
from tests.fakeslack import FakeSlack
from tests.test_followups_http import CHANNEL, DAY, settings_for


def calls(metrics: Metrics, method: str, error: str) -> float:
    return metrics.value("vllm_digest_slack_api_calls_total", {"method": method, "error": error})


def test_slack_calls_are_counted_by_method_and_error_each_attempt(fake_slack: FakeSlack) -> None:
    metrics = Metrics()
    client = count_slack_calls(
        slack_web_client("xoxb-test", fake_slack.api_url, reports_unknown=True, backoff=0.0), metrics
    )
    count_slack_calls(client, metrics)  # installing twice counts once
    fake_slack.fail("chat.postMessage", error="channel_not_found")
    with pytest.raises(SlackApiError):
        client.chat_postMessage(channel="C1", text="x")
    fake_slack.fail("chat.postMessage", status=500)
    with pytest.raises(SlackApiError):  # a post is not sent again after a 5xx (it may be stored)
        client.chat_postMessage(channel="C1", text="y")
    client.chat_postMessage(channel="C1", text="z")
    fake_slack.fail("conversations.history", status=500)
    client.conversations_history(channel="C1")  # a read is retried after the 500
    assert calls(metrics, "chat.postMessage", "channel_not_found") == 1
    assert calls(metrics, "chat.postMessage", "internal_error") == 1
    assert calls(metrics, "chat.postMessage", "ok") == 1
    assert calls(metrics, "conversations.history", "ok") == 1
    assert calls(metrics, "conversations.history", "internal_error") == 1
    unreachable = count_slack_calls(
        WebClient(token="xoxb-test", base_url=f"http://127.0.0.1:{free_port()}/api/"), metrics
    )
    with pytest.raises(OSError):
        unreachable.auth_test()
    # The default client retries a connection error once: two attempts, both counted.
    assert (
        metrics.value("vllm_digest_slack_api_calls_total", {"method": "auth.test", "error": "URLError"}) == 2
    )


def test_daily_outcomes_are_counted_and_each_bot_has_its_own_registry(
    fake_slack: FakeSlack, db_url: str
) -> None:
    store = SqlStore.open(db_url)
    bot = build(settings_for(fake_slack), store=store)
    other = build(settings_for(fake_slack))
    try:
        assert bot.scheduler is not None
        assert bot.scheduler.run(CHANNEL, DAY).status.value == "posted"
        assert bot.scheduler.run(CHANNEL, DAY).status.value == "already posted"
        fake_slack.fail("chat.postMessage", status=500)  # may be stored: unknown, looked for next run
        assert bot.scheduler.run(CHANNEL, DAY + dt.timedelta(days=1)).status.value == "unknown"
        status = {
            s: bot.metrics.value("vllm_digest_daily_posts_total", {"status": s})
            for s in ("posted", "already_posted", "unknown")
        }
        assert status == {"posted": 1, "already_posted": 1, "unknown": 1}
        assert calls(bot.metrics, "chat.postMessage", "internal_error") == 1
        assert other.metrics.value("vllm_digest_daily_posts_total", {"status": "posted"}) == 0
    finally:
        other.close()
        bot.close()
        store.close()


def test_retention_takes_days_weeks_or_iso(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_settings().usage_retention == dt.timedelta(days=90)
    for value, days in (("30d", 30), ("2w", 14), ("P7D", 7)):
        monkeypatch.setenv("USAGE_RETENTION", value)
        assert load_settings().usage_retention == dt.timedelta(days=days)


def test_serve_exposes_metrics_only_on_metrics_port_when_set_and_logs_json(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    metrics_port = free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "SLACK_BOT_TOKEN": "xoxb-test-serve-token",
        "SLACK_SIGNING_SECRET": "test-secret",
        "SLACK_API_URL": fake_slack.api_url,
        "DIGEST_DIR": str(ROOT / "digests"),
        "METRICS_PORT": str(metrics_port),
        "LOG_FORMAT": "json",
    }
    serve = Serve(env, tmp_path)
    try:
        port = re.search(r"HTTP on port (\d+)", serve.wait_for_line("HTTP on port"))
        assert port is not None
        # The digests load in the background, before or after the listen line: scrape once loaded.
        if not any("digest entries from the" in line for line in serve.seen):
            serve.wait_for_line("digest entries from the")
        scraped = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
        assert "vllm_digest_digest_entries 8.0" in scraped
        public = httpx.get(f"http://127.0.0.1:{port.group(1)}/metrics", timeout=5)
        assert public.status_code == 404 and "vllm_digest" not in public.text  # not on Slack's port
    finally:
        serve.stop()
    logged = [json.loads(line) for line in serve.seen if line.startswith("{")]
    assert any(r["logger"] == "alembic.runtime.migration" for r in logged)
    assert "xoxb-test-serve-token" not in "".join(serve.seen)


def test_the_grafana_dashboard_queries_only_metrics_the_bot_exports() -> None:
    dashboard = json.loads((ROOT / "deploy" / "grafana-dashboard.json").read_text(encoding="utf-8"))
    queried = {
        re.sub(r"_(total|bucket|count|sum)$", "", name)
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"vllm_digest_\w+", target["expr"])
    }
    metrics = Metrics()
    metrics.watch_library(lambda: LibraryState(1, 8, 0, 0))
    exported = {family.name for family in metrics.registry.collect()}
    assert queried <= exported, queried - exported
    assert exported - queried == set(), "a metric without a panel"


def test_serve_wires_the_weekly_curator_report_when_a_channel_is_set(
    fake_slack: FakeSlack, db_url: str
) -> None:
    store = SqlStore.open(db_url)
    settings = settings_for(fake_slack).model_copy(update={"curator_channel": "C0CURATOR", "language": "en"})
    bot = build(settings, store=store)
    try:
        assert bot.curator is not None and bot.curator_jobs is not None
        job = bot.curator_jobs.get_job("curator-report:C0CURATOR")
        assert job is not None and "day_of_week='mon'" in str(job.trigger)
        assert bot.curator.run() == "posted"
        assert bot.curator.run() == "already posted"
        (posted,) = fake_slack.messages("C0CURATOR")
        assert posted["blocks"][0]["text"]["text"] == "This week's reader report"
        status = {
            s: bot.metrics.value("vllm_digest_curator_reports_total", {"status": s})
            for s in ("posted", "already_posted")
        }
        assert status == {"posted": 1, "already_posted": 1}
    finally:
        bot.close()
        store.close()
    without_store = build(settings)
    assert without_store.curator is None  # the report needs the usage tables
    without_store.close()


def test_cached_children_count_where_labels_would() -> None:
    """`Metrics.searches_by` / `commands_by_kind` hand out prometheus-client's own children:
    counts land in the same samples as through `labels()`, each label set apart."""
    metrics = Metrics()
    assert metrics.searches_by("command", "results") is metrics.searches.labels("command", "results")
    metrics.searches_by("command", "results").inc()
    metrics.searches.labels("command", "results").inc()
    metrics.searches_by("dm", "no_results").inc()
    metrics.commands_by_kind("search").inc(3)
    searches = "vllm_digest_searches_total"
    assert metrics.value(searches, {"source": "command", "outcome": "results"}) == 2
    assert metrics.value(searches, {"source": "dm", "outcome": "no_results"}) == 1
    assert metrics.value(searches, {"source": "command", "outcome": "no_results"}) == 0
    assert metrics.value("vllm_digest_commands_total", {"kind": "search"}) == 3
    assert metrics.commands_by_kind("search") is metrics.commands_by_kind("search")
