"""Hostile and malformed requests against the real HTTP server: size and signature come before
parsing, nothing is logged with its body, nothing unhandled gets a non-2xx, nothing replayed is
acted on twice."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
import pytest

from chatbot.slack.inbound import MAX_BODY_BYTES
from chatbot.slack.ledger import KEEP, SHARE_WINDOW, InMemoryLedger
from chatbot.slack.server import HttpServer, asgi_app
from chatbot.store import SqlStore
from chatbot.wiring import build
from tests.fakeslack import FakeSlack
from tests.slackrequests import (
    SIGNING_SECRET,
    button_body,
    buttons,
    command_body,
    event_body,
    post,
    signed_headers,
)
from tests.test_slack_http import Served, settings_for

SECRET_MARK = "https://hooks.slack.com/commands/SECRET-RESPONSE-URL"


@pytest.fixture
def served(fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture) -> Iterator[Served]:
    caplog.set_level(logging.INFO)
    bot = build(settings_for(fake_slack))
    server = HttpServer(asgi_app(bot.app, bot.health), host="127.0.0.1", port=0).start()
    yield Served(fake_slack, bot, f"http://127.0.0.1:{server.port}/slack/events")
    server.stop()
    bot.close()


def effects(fake: FakeSlack) -> list[str]:
    """What the bot did in Slack (its start-up auth.test aside)."""
    return [c.method for c in fake.calls() if c.method != "auth.test"]


def logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records)


def unsigned(content_type: str, timestamp: str = str(int(time.time()))) -> dict[str, str]:
    return {
        "Content-Type": content_type,
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": "v0=00",
    }


@pytest.mark.parametrize(
    ("timestamp", "signature"),
    [
        ("9" * 400, None),  # float() overflows
        ("9" * 5000, None),  # int() refuses more than 4300 digits
        ("0" * 30 + "1", None),
        (None, b"v0=\xc3\xa9\xc3\xa9"),  # compare_digest refuses a non-ASCII str
        (None, "v0=" + "é" * 64),
    ],
    ids=["400-digits", "5000-digits", "leading-zeros", "signature-utf8-bytes", "signature-non-ascii"],
)
def test_odd_signature_headers_are_401_never_500(
    served: Served, caplog: pytest.LogCaptureFixture, timestamp: str | None, signature: str | bytes | None
) -> None:
    body = command_body("compile", SECRET_MARK)
    headers = {k.encode(): v.encode() for k, v in signed_headers(body).items()}
    if timestamp is not None:
        headers[b"X-Slack-Request-Timestamp"] = timestamp.encode()
    if signature is not None:
        headers[b"X-Slack-Signature"] = (
            signature.encode("latin-1") if isinstance(signature, str) else signature
        )
    response = httpx.post(served.url, content=body.encode(), headers=headers, timeout=5)
    assert response.status_code == 401
    assert response.json()["error"]
    assert len([r for r in caplog.records if "refused a request" in r.getMessage()]) == 1
    assert "Traceback" not in caplog.text and SECRET_MARK not in logged(caplog)
    assert effects(served.fake) == []


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (b'{x "response_url": "' + SECRET_MARK.encode() + b'"', unsigned("application/json")),
        (
            b"payload=notjson&response_url=" + SECRET_MARK.encode(),
            unsigned("application/x-www-form-urlencoded"),
        ),
        (b"\xff\xfe\xfa" + SECRET_MARK.encode(), unsigned("application/x-www-form-urlencoded")),
        (json.dumps([{"response_url": SECRET_MARK}]).encode(), unsigned("application/json")),
        (
            b"token=t&response_url=" + SECRET_MARK.encode(),
            unsigned("application/x-www-form-urlencoded", "soon"),
        ),
        (b"token=t&response_url=" + SECRET_MARK.encode(), {"Content-Type": "application/json"}),
    ],
    ids=[
        "json-garbage",
        "payload-notjson",
        "not-utf8",
        "json-array",
        "timestamp-not-a-number",
        "no-signature",
    ],
)
def test_unsigned_junk_is_401_with_one_log_line_and_no_body(
    served: Served, caplog: pytest.LogCaptureFixture, body: bytes, headers: dict[str, str]
) -> None:
    response = httpx.post(served.url, content=body, headers=headers, timeout=5)
    assert response.status_code == 401
    refusals = [r for r in caplog.records if "refused a request" in r.getMessage()]
    assert len(refusals) == 1
    assert SECRET_MARK not in logged(caplog)
    assert "Traceback" not in caplog.text
    assert effects(served.fake) == []


def test_an_oversized_body_is_413_before_it_is_read(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    declared = httpx.post(
        served.url,
        content=b"x" * (MAX_BODY_BYTES + 1),
        headers=unsigned("application/x-www-form-urlencoded"),
        timeout=10,
    )
    assert declared.status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the stream is cut at the cap
        for _ in range(64):
            yield b"response_url=" + SECRET_MARK.encode() + b"&" + b"y" * 65536

    streamed = httpx.post(
        served.url, content=chunks(), headers=unsigned("application/x-www-form-urlencoded"), timeout=10
    )
    assert streamed.status_code == 413
    assert SECRET_MARK not in logged(caplog) and "yyyy" not in logged(caplog)
    # A signed body over the cap is refused the same way: the cap comes before anything else.
    big = "text=" + "z" * MAX_BODY_BYTES
    assert post(served.url, big).status_code == 413
    assert effects(served.fake) == []


def signed_raw(url: str, body: bytes, content_type: str) -> httpx.Response:
    """POST exact bytes with Slack's v0 signature over them (works for non-UTF-8 bodies too)."""
    ts = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": content_type,
    }
    return httpx.post(url, content=body, headers=headers, timeout=5)


def actions_payload(actions: object) -> bytes:
    payload = {"type": "block_actions", "team": {"id": "T1"}, "user": {"id": "U1"}, "actions": actions}
    return urlencode({"payload": json.dumps(payload)}).encode()


def view_payload(view: object) -> bytes:
    payload = {"type": "view_submission", "team": {"id": "T1"}, "user": {"id": "U1"}, "view": view}
    return urlencode({"payload": json.dumps(payload)}).encode()


def event_payload(event: object) -> bytes:
    return json.dumps({"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": event}).encode()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (command_body("compile", "http://x/").encode(), "application/json"),
        (b"command=%2Fvllm-digest&text=\xff\xfe", "application/x-www-form-urlencoded"),
        (actions_payload([]), "application/x-www-form-urlencoded"),
        (actions_payload("share_entry:1"), "application/x-www-form-urlencoded"),
        (actions_payload(["share_entry:1"]), "application/x-www-form-urlencoded"),
        (event_payload("message"), "application/json"),
        (event_payload([{"type": "message"}]), "application/json"),
        (event_payload({"text": "no type"}), "application/json"),
        (b'{"type": "event_callback", "event": {"type": "message"}', "application/json"),
        (b"<xml/>", "text/xml"),
        (actions_payload([{"type": "button", "value": "1"}]), "application/x-www-form-urlencoded"),
        (
            view_payload({"id": "V1", "callback_id": "share_picker", "state": {"values": {}}}),
            "application/x-www-form-urlencoded",
        ),
        (
            view_payload({"id": "V1", "callback_id": "feedback_missing", "type": 7}),
            "application/x-www-form-urlencoded",
        ),
    ],
    ids=[
        "form-as-json",
        "not-utf8",
        "empty-actions",
        "string-actions",
        "actions-of-strings",
        "event-string",
        "event-list",
        "event-without-type",
        "truncated-json",
        "xml",
        "action-without-id",
        "view-without-type",
        "view-type-not-a-string",
    ],
)
def test_signed_but_malformed_is_400_never_500(
    served: Served, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str
) -> None:
    response = signed_raw(served.url, body, content_type)
    assert response.status_code == 400
    assert response.json()["error"]
    assert len([r for r in caplog.records if "refused a request" in r.getMessage()]) == 1
    assert "Traceback" not in caplog.text
    assert effects(served.fake) == []


@pytest.mark.parametrize(
    ("body", "content_type", "line"),
    [
        (
            actions_payload([{"action_id": "someone_elses_button", "value": "1"}]),
            "form",
            "someone_elses_button",
        ),
        (
            urlencode(
                {
                    "payload": json.dumps(
                        {"type": "view_submission", "team": {"id": "T1"}, "view": {"id": "V1"}}
                    )
                }
            ).encode(),
            "form",
            "view_submission",
        ),
        (
            event_body({"type": "reaction_added", "user": "U1", "reaction": "eyes"}).encode(),
            "json",
            "reaction_added",
        ),
        (urlencode({"command": "/other", "text": "x", "trigger_id": "9.9"}).encode(), "form", "/other"),
    ],
    ids=["unknown-action", "view-submission", "unknown-event", "unknown-command"],
)
def test_unhandled_requests_get_200_and_one_line(
    served: Served, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str, line: str
) -> None:
    kind = "application/json" if content_type == "json" else "application/x-www-form-urlencoded"
    response = signed_raw(served.url, body, kind)
    assert response.status_code == 200
    ignored = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ignored")]
    assert len(ignored) == 1 and line in ignored[0]
    assert "Unhandled request" not in caplog.text and "response_url" not in caplog.text
    assert served.fake.calls("chat.postMessage") == []


def share_press(served: Served, channel: str = "C0SHARE") -> tuple[str, dict[str, Any]]:
    answer = post(served.url, command_body("compile", served.fake.response_url("cmd"))).json()
    share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
    return button_body(share, served.fake.response_url("press"), channel=channel), share


def test_a_replayed_share_press_posts_one_card(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    body, _ = share_press(served)
    headers = signed_headers(body)
    for _ in range(3):  # the same signed request, captured and sent again inside the window
        assert post(served.url, body, headers).status_code == 200
    served.fake.wait_for("response", where=lambda c: c.path.endswith("/press"))
    assert served.bot.wait_idle(5)
    assert len(served.fake.calls("chat.postMessage")) == 1
    assert len(served.fake.messages("C0SHARE")) == 1
    assert len([r for r in caplog.records if "replayed request" in r.getMessage()]) == 2


def test_a_replayed_command_is_answered_once(served: Served) -> None:
    body = command_body("compile", served.fake.response_url("cmd"))
    headers = signed_headers(body)
    first = post(served.url, body, headers)
    replay = post(served.url, body, headers)
    assert first.status_code == replay.status_code == 200
    assert "compile" in first.text or first.json()["blocks"]
    assert replay.content == b""


def test_the_in_memory_ledger_refuses_replays_within_keep_at_any_volume() -> None:
    """Replays inside KEEP are refused however many commands came in between (it once
    rescanned the whole table on every command past 10,000 keys); keys older than KEEP are
    forgotten oldest first, and a re-marked share key counts from its new time."""
    now = [dt.datetime(2026, 11, 30, 12, tzinfo=dt.UTC)]
    ledger = InMemoryLedger(clock=lambda: now[0])
    keys = [f"cmd:T1:t.{n}" for n in range(25_000)]
    assert all(ledger.mark_handled(key) for key in keys)
    assert not any(ledger.mark_handled(key) for key in keys[::997])
    assert ledger.mark_handled("share:C1:-:e1", within=SHARE_WINDOW)
    now[0] += SHARE_WINDOW
    assert ledger.mark_handled("share:C1:-:e1", within=SHARE_WINDOW)  # a minute later: again
    now[0] += KEEP - SHARE_WINDOW
    assert ledger.mark_handled(keys[0])  # past KEEP: forgotten (Slack's signature window is 5 min)
    assert not ledger.mark_handled("share:C1:-:e1")  # marked a minute later: still within KEEP
    assert len(ledger._seen) == 2


def test_a_double_click_shares_once_and_says_so(served: Served) -> None:
    _, share = share_press(served)
    for _ in range(2):  # two distinct presses (own trigger ids) of one button
        post(served.url, button_body(share, served.fake.response_url("press"), channel="C0SHARE"))
    served.fake.wait_for("response", count=2, where=lambda c: c.path.endswith("/press"))
    assert served.bot.wait_idle(5)
    assert len(served.fake.messages("C0SHARE")) == 1
    notes = [c.params["text"] for c in served.fake.calls("response") if c.path.endswith("/press")]
    assert sorted(notes) == sorted(["已分享到频道。", "这个条目刚刚已分享到这里了。"])


def test_a_failed_share_can_be_tried_again(served: Served) -> None:
    served.fake.fail("chat.postMessage", error="not_in_channel")
    _, share = share_press(served)
    post(served.url, button_body(share, served.fake.response_url("press"), channel="C0SHARE"))
    served.fake.wait_for("response", where=lambda c: c.path.endswith("/press"))
    assert served.bot.wait_idle(5)
    post(served.url, button_body(share, served.fake.response_url("press"), channel="C0SHARE"))
    served.fake.wait_for("response", count=2, where=lambda c: c.path.endswith("/press"))
    assert len(served.fake.messages("C0SHARE")) == 1


def test_two_replicas_on_one_store_share_once(fake_slack: FakeSlack, db_url: str) -> None:
    """A double click whose presses reach two replicas: the store's mark decides."""
    bots, servers = [], []
    for _ in range(2):
        bot = build(settings_for(fake_slack), store=SqlStore.open(db_url))
        bots.append(bot)
        servers.append(HttpServer(asgi_app(bot.app), host="127.0.0.1", port=0).start())
    try:
        urls = [f"http://127.0.0.1:{s.port}/slack/events" for s in servers]
        answer = post(urls[0], command_body("compile", fake_slack.response_url("cmd"))).json()
        share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
        body = button_body(share, fake_slack.response_url("press"), channel="C0TWO")
        headers = signed_headers(body)
        for url in urls:  # a replay of one press to both replicas
            assert post(url, body, headers).status_code == 200
        for url in urls:  # and a second press to each
            post(url, button_body(share, fake_slack.response_url("press"), channel="C0TWO"))
        fake_slack.wait_for("response", count=3, where=lambda c: c.path.endswith("/press"))
        assert all(bot.wait_idle(5) for bot in bots)
        assert len(fake_slack.messages("C0TWO")) == 1
    finally:
        for server in servers:
            server.stop()
        for bot in bots:
            bot.close()


def test_start_does_not_warn_that_the_token_is_unused(
    fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bolt reads SLACK_BOT_TOKEN from the environment even when handed a client; serve has it set."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    caplog.set_level(logging.DEBUG)
    bot = build(settings_for(fake_slack))
    bot.close()
    assert "will be unused" not in caplog.text


def long_form(**fields: str) -> bytes:
    return (command_body("compile", "http://127.0.0.1:9/r") + "&" + urlencode(fields)).encode()


@pytest.mark.parametrize(
    ("body", "content_type", "field"),
    [
        (long_form(channel_id="C" * 65), "application/x-www-form-urlencoded", "channel_id"),
        (long_form(user_id="U" * 65), "application/x-www-form-urlencoded", "user_id"),
        (event_payload({"type": "message", "channel": "D1", "ts": "1" * 33}), "application/json", "event.ts"),
        (
            event_payload({"type": "app_mention", "channel": "C" * 65, "ts": "1.2"}),
            "application/json",
            "event.channel",
        ),
        (
            urlencode(
                {
                    "payload": json.dumps(
                        {
                            "type": "block_actions",
                            "user": {"id": "U1"},
                            "container": {"channel_id": "C1", "thread_ts": "9" * 33},
                            "actions": [{"action_id": "share_entry:1", "value": "1"}],
                        }
                    )
                }
            ).encode(),
            "application/x-www-form-urlencoded",
            "container.thread_ts",
        ),
    ],
    ids=["channel-id", "user-id", "event-ts", "event-channel", "press-thread-ts"],
)
def test_an_id_or_ts_longer_than_slack_sends_is_400_naming_it(
    served: Served, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str, field: str
) -> None:
    """The store keeps ids in String(64) and timestamps in String(32): PostgreSQL refused
    longer ones and the request went unanswered (`lost a app_mention`)."""
    response = signed_raw(served.url, body, content_type)
    assert response.status_code == 400
    assert field in response.json()["error"]
    assert "Traceback" not in caplog.text
    assert effects(served.fake) == []


def test_a_key_longer_than_the_store_column_still_acts_once(fake_slack: FakeSlack, db_url: str) -> None:
    """A press whose trigger id and action ts are longer than handled_events.key (String(200)):
    marked by head and digest, so the share is posted once and the replay dropped."""
    bot = build(settings_for(fake_slack), store=SqlStore.open(db_url))
    server = HttpServer(asgi_app(bot.app, bot.health), host="127.0.0.1", port=0).start()
    url = f"http://127.0.0.1:{server.port}/slack/events"
    try:
        answer = post(url, command_body("compile", fake_slack.response_url("cmd"))).json()
        share = next(b for b in buttons(answer) if b["action_id"].startswith("share_entry"))
        payload = json.loads(
            parse_qs(button_body(share, fake_slack.response_url("press"), channel="C0LONG"))["payload"][0]
        )
        payload["trigger_id"], payload["actions"][0]["action_ts"] = "7" * 300, "8" * 300
        replayed = urlencode({"payload": json.dumps(payload)})
        for _ in range(2):
            assert post(url, replayed).status_code == 200
        told = fake_slack.wait_for("response", where=lambda c: c.path.endswith("/press"))
        assert told.params["text"] == "已分享到频道。"
        assert bot.wait_idle(5)
        assert len(fake_slack.messages("C0LONG")) == 1
        assert len([c for c in fake_slack.calls("response") if c.path.endswith("/press")]) == 1
    finally:
        server.stop()
        bot.close()
