"""A dead install: a revoked or invalid token at start is one line naming SLACK_BOT_TOKEN and
Slack's error (not "cannot reach Slack"); `app_uninstalled` / `tokens_revoked` stop the jobs that
post on a schedule, with one line. Real `serve` processes and signed HTTP events, the fake Slack."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.daily.test_serve_daily import ROOT
from tests.fakeslack import FakeSlack
from tests.slackrequests import SIGNING_SECRET, event_body, post, signed_headers
from tests.test_followups_http import settings_for


@pytest.mark.parametrize("error", ["token_revoked", "invalid_auth", "account_inactive"])
def test_a_refused_token_at_start_is_one_line_naming_the_setting(
    fake_slack: FakeSlack, tmp_path: Path, error: str
) -> None:
    fake_slack.fail("auth.test", error=error)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
        "SLACK_BOT_TOKEN": "xoxb-revoked",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": fake_slack.api_url,
    }
    done = subprocess.run(
        [sys.executable, "-m", "chatbot.cli", "serve", "--port", "0"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    lines = [
        line for line in done.stderr.splitlines() if line.startswith("vllm-digest:") and "port" not in line
    ]
    assert lines == [f"vllm-digest: setting SLACK_BOT_TOKEN: Slack refused the token ({error})"], done.stderr
    assert "cannot reach Slack" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("event", "stops"),
    [
        ({"type": "app_uninstalled"}, True),
        ({"type": "tokens_revoked", "tokens": {"bot": ["UBOT0001"]}}, True),
        ({"type": "tokens_revoked", "tokens": {"oauth": ["U0SOMEONE"]}}, False),
    ],
    ids=["app_uninstalled", "bot token revoked", "user token revoked"],
)
def test_an_uninstall_stops_the_scheduled_jobs_with_one_line(
    fake_slack: FakeSlack,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    event: dict[str, object],
    stops: bool,
) -> None:
    store = SqlStore.open(f"sqlite:///{tmp_path / 'bot.db'}")
    bot = build(settings_for(fake_slack).model_copy(update={"daily_channels": ["C0DAILY"]}), store=store)
    server = HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start()
    try:
        assert bot.scheduler is not None
        bot.scheduler.start()
        assert bot.scheduler.scheduler is not None
        body = event_body(event)
        headers = {**signed_headers(body), "Content-Type": "application/json"}
        with caplog.at_level(logging.INFO, logger="chatbot.slack.handlers.install"):
            for _ in range(2):  # a second delivery says nothing more
                assert post(f"http://127.0.0.1:{server.port}/slack/events", body, headers).status_code == 200
        lines = [r for r in caplog.records if r.name == "chatbot.slack.handlers.install"]
        assert (bot.scheduler.scheduler is None) is stops
        if stops:
            assert len(lines) == 1 and lines[0].levelno == logging.ERROR
            assert "install is gone" in lines[0].getMessage() and "SLACK_BOT_TOKEN" in lines[0].getMessage()
            assert bot.installs is not None and bot.installs.gone.is_set()
        else:
            assert all(r.levelno == logging.INFO for r in lines)
    finally:
        server.stop()
        bot.close()
        store.close()
