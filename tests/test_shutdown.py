"""SIGTERM to a real `vllm-digest serve` while a model answer streams: the stream is cut, the
answer at hand (the extractive one) replaces the placeholder within the drain time, whatever
LLM_TIMEOUT is, and the process exits. Real HTTP with signed events, the fake Slack and a model
server that never answers (tests/fakeopenai.py, `hold=True`)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.daily.test_serve_daily import ROOT, Serve
from tests.fakeopenai import FakeModel, Reply
from tests.fakeslack import BOT_USER_ID, FakeSlack
from tests.slackrequests import SIGNING_SECRET, all_text, event_body, post, signed_headers, wait_ready

CHANNEL = "C0ASK"
# Docs (docs/slack.md, docs/answers.md): the answers in progress are finished within 5 s.
DRAIN = 5.0


def test_sigterm_while_a_model_answer_streams_posts_the_extractive_answer_and_exits(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    with FakeModel() as model:
        model.script(Reply("never sent", hold=True))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": fake_slack.api_url,
            "DIGEST_DIR": str(ROOT / "digests"),
            "LANGUAGE": "en",
            "LLM_BASE_URL": model.base_url,
            "LLM_TIMEOUT": "60",
        }
        serve = Serve(env, tmp_path)
        try:
            base = f"http://127.0.0.1:{serve.port}"
            wait_ready(base)
            text = f"<@{BOT_USER_ID}> what does the torch.compile change do?"
            body = event_body(
                {
                    "type": "app_mention",
                    "channel": CHANNEL,
                    "user": "U0ASKER",
                    "text": text,
                    "ts": "1800000000.000001",
                }
            )
            headers = {**signed_headers(body), "Content-Type": "application/json"}
            assert post(f"{base}/slack/events", body, headers).status_code == 200
            placeholder = fake_slack.wait_for("chat.postMessage", timeout=30)
            model.wait_for_request()
            stopped_at = time.monotonic()
            serve.process.send_signal(signal.SIGTERM)
            final = fake_slack.wait_for("chat.update", timeout=DRAIN)
            serve.process.wait(timeout=DRAIN + 3)
            exited_after = time.monotonic() - stopped_at
        finally:
            if serve.process.poll() is None:
                serve.process.kill()
                serve.process.wait()
            model.release()
    assert final.at - stopped_at < DRAIN and exited_after < DRAIN + 3
    assert final.params["ts"] == placeholder.response["ts"]
    shown = all_text(final.params)
    assert "▌" not in shown and "Answering from" not in shown and "pull/" in shown
    messages = fake_slack.messages(CHANNEL)
    assert len(messages) == 1 and all_text(messages[0]) == shown
    assert serve.process.returncode is not None
