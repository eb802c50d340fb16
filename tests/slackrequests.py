"""Signed Slack requests (slash commands, button presses, events) for tests, as Slack sends them."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

SIGNING_SECRET = "test-signing-secret-0123456789abcdef"


def signed_headers(body: str, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """Slack's v0 signature: HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {
        "X-Slack-Request-Timestamp": ts,
        "X-Slack-Signature": signature,
        "Content-Type": "application/x-www-form-urlencoded",
    }


_trigger_numbers = itertools.count()


def next_trigger_id() -> str:
    """A trigger id no other request of this test run has: Slack gives each invocation its own."""
    return f"{time.time_ns()}.{next(_trigger_numbers)}"


def command_body(text: str, response_url: str, channel: str = "C0CHAN", user: str = "U0ASKER") -> str:
    return urlencode(
        {
            "token": "legacy",
            "team_id": "T0000001",
            "channel_id": channel,
            "channel_name": "vllm",
            "user_id": user,
            "user_name": "asker",
            "command": "/vllm-digest",
            "text": text,
            "response_url": response_url,
            "trigger_id": next_trigger_id(),
            "api_app_id": "A0APP",
        }
    )


def button_body(
    button: dict[str, Any], response_url: str, channel: str = "C0CHAN", user: str = "U0ASKER"
) -> str:
    """A block_actions payload for pressing `button` (an element from our blocks)."""
    payload = {
        "type": "block_actions",
        "team": {"id": "T0000001"},
        "user": {"id": user, "username": "asker"},
        "api_app_id": "A0APP",
        "container": {"type": "message", "is_ephemeral": True, "channel_id": channel},
        "channel": {"id": channel, "name": "vllm"},
        "response_url": response_url,
        "trigger_id": next_trigger_id(),
        "actions": [
            {
                "type": "button",
                "action_id": button["action_id"],
                "block_id": "b1",
                "value": button.get("value"),
                "action_ts": str(time.time()),
            }
        ],
    }
    return urlencode({"payload": json.dumps(payload)})


def shortcut_body(
    callback_id: str, text: str, response_url: str, channel: str = "C0CHAN", user: str = "U0ASKER"
) -> str:
    """A message_action payload: the message shortcut used on a message saying `text`."""
    payload = {
        "type": "message_action",
        "callback_id": callback_id,
        "team": {"id": "T0000001"},
        "user": {"id": user, "username": "asker", "name": "asker"},
        "api_app_id": "A0APP",
        "channel": {"id": channel, "name": "vllm"},
        "message": {"type": "message", "user": "U0AUTHOR", "text": text, "ts": "1700000000.000100"},
        "message_ts": "1700000000.000100",
        "response_url": response_url,
        "trigger_id": "1.2.3",
    }
    return urlencode({"payload": json.dumps(payload)})


def view_submission_body(
    view: dict[str, Any], values: dict[str, dict[str, Any]], user: str = "U0ASKER"
) -> str:
    """A view_submission payload for submitting `view` (a modal we opened) with `values`
    (block_id → action_id → {"type", "value"})."""
    payload = {
        "type": "view_submission",
        "team": {"id": "T0000001"},
        "user": {"id": user, "username": "asker"},
        "api_app_id": "A0APP",
        "trigger_id": "4.5.6",
        "view": {**view, "id": "V0VIEW", "state": {"values": values}},
    }
    return urlencode({"payload": json.dumps(payload)})


_event_numbers = itertools.count()


def event_body(event: dict[str, Any]) -> str:
    """An Events API event_callback (sent as JSON), with an event id no other call returns."""
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": "T0000001",
            "api_app_id": "A0APP",
            "event_id": f"Ev{time.time_ns()}{next(_event_numbers)}",
            "event_time": int(time.time()),
            "event": event,
        }
    )


def post(url: str, body: str, headers: dict[str, str] | None = None, timeout: float = 5.0) -> httpx.Response:
    return httpx.post(url, content=body.encode(), headers=headers or signed_headers(body), timeout=timeout)


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Every button of a Block Kit message, in order."""
    return [
        element
        for block in message.get("blocks", [])
        if block["type"] == "actions"
        for element in block["elements"]
        if element["type"] == "button"
    ]


def all_text(message: dict[str, Any]) -> str:
    """Every rendered string of a message (fallback and blocks), for content assertions."""
    return "\n".join(rendered_strings(message))


def rendered_strings(message: dict[str, Any]) -> list[str]:
    """Strings Slack renders as text: the fallback and every text object (not values, urls, ids)."""
    out: list[str] = [message.get("text", "")]

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key == "text":
            out.append(node)

    walk(message.get("blocks", []))
    return out


def wait_ready(base_url: str, timeout: float = 60.0) -> httpx.Response:
    """GET /readyz until it answers 200 (a `serve` process loads its digests after it listens);
    polled against a deadline, the last answer in the failure."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        try:
            response = httpx.get(f"{base_url}/readyz", timeout=5)
        except httpx.TransportError as exc:
            last = repr(exc)
        else:
            if response.status_code == 200:
                return response
            last = f"{response.status_code} {response.text}"
        time.sleep(0.02)  # polling another process: nothing to wait on
    raise AssertionError(f"{base_url}/readyz not 200 within {timeout} s: {last}")
