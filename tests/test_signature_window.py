"""The bot's own 5-minute signature window is the first line of defence, tested by itself.

Bolt checks the signature and timestamp again behind `chatbot.slack.inbound`, so a broken window
in ours would go unnoticed by any test that goes through both. Here the Bolt app behind the
server has its own check off (it would serve anything): whatever is refused is refused by ours.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from slack_bolt import App
from slack_sdk import WebClient

from chatbot.slack.inbound import TIMESTAMP_WINDOW, Rejected, verify_signature
from chatbot.slack.server import HttpServer, asgi_app
from tests.fakeslack import FakeSlack
from tests.slackrequests import SIGNING_SECRET, command_body, signed_headers

DAY = 24 * 3600
# Seconds a request's timestamp is behind now (negative: ahead of now).
REFUSED = {
    "301 s old": 301,
    "600 s old": 600,
    "30 days old": 30 * DAY,
    "301 s ahead": -301,
    "30 days ahead": -30 * DAY,
}
ACCEPTED = {"now": 0, "300 s old": 300, "300 s ahead": -300}


def signed_at(age: int, now: int, body: str) -> dict[str, str]:
    """Correct v0 signature headers for `body`, timestamped `age` seconds before `now`."""
    return {k.lower(): v for k, v in signed_headers(body, timestamp=now - age).items()}


def now_for(age: int) -> int:
    """Whole seconds to count `age` from, so the request is at least that far from the server's
    clock (a timestamp ahead counts from the next second, one behind from the last)."""
    return math.ceil(time.time()) if age < 0 else math.floor(time.time())


@pytest.mark.parametrize("age", REFUSED.values(), ids=REFUSED.keys())
def test_a_correctly_signed_request_outside_the_window_is_refused(age: int) -> None:
    now = 1_800_000_000
    body = command_body("compile", "http://127.0.0.1:9/r")
    with pytest.raises(Rejected) as refused:
        verify_signature(SIGNING_SECRET, signed_at(age, now, body), body.encode(), now=lambda: now + 0.5)
    assert refused.value.status == 401 and "outside the 5-minute window" in refused.value.reason


@pytest.mark.parametrize("age", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_a_correctly_signed_request_inside_the_window_is_admitted(age: int) -> None:
    now = 1_800_000_000
    body = command_body("compile", "http://127.0.0.1:9/r")
    verify_signature(SIGNING_SECRET, signed_at(age, now, body), body.encode(), now=lambda: float(now))
    assert TIMESTAMP_WINDOW == 300


@pytest.fixture
def unguarded(fake_slack: FakeSlack) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Our server in front of a Bolt app that checks nothing and records every command."""
    seen: list[dict[str, Any]] = []
    lock = threading.Lock()
    app = App(
        client=WebClient(token="xoxb-test", base_url=fake_slack.api_url),
        signing_secret=SIGNING_SECRET,
        request_verification_enabled=False,
        token_verification_enabled=False,
        process_before_response=True,
    )

    @app.command("/vllm-digest")
    def command(ack: Any, body: dict[str, Any]) -> None:
        with lock:
            seen.append(body)
        ack("served")

    server = HttpServer(asgi_app(app, signing_secret=SIGNING_SECRET), host="127.0.0.1", port=0).start()
    yield f"http://127.0.0.1:{server.port}/slack/events", seen
    server.stop()


@pytest.mark.parametrize("age", REFUSED.values(), ids=REFUSED.keys())
def test_over_http_our_window_alone_refuses_a_stale_or_early_request(
    unguarded: tuple[str, list[dict[str, Any]]], age: int
) -> None:
    url, seen = unguarded
    body = command_body("compile", "http://127.0.0.1:9/r")
    response = httpx.post(url, content=body, headers=signed_at(age, now_for(age), body), timeout=5)
    assert response.status_code == 401
    assert response.json() == {"error": "X-Slack-Request-Timestamp outside the 5-minute window"}
    assert seen == []  # never reached the app


def test_over_http_the_unguarded_app_serves_a_fresh_request(
    unguarded: tuple[str, list[dict[str, Any]]],
) -> None:
    url, seen = unguarded
    body = command_body("compile", "http://127.0.0.1:9/r")
    response = httpx.post(url, content=body, headers=signed_at(0, int(time.time()), body), timeout=5)
    assert response.status_code == 200 and response.text == "served"
    assert [b["text"] for b in seen] == ["compile"]
