"""The Slack app manifest asks for exactly what the app listens to and needs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from slack_bolt import BoltRequest

from chatbot.bot import Bot
from chatbot.slack import action_ids as ids
from chatbot.slack.app import BOT_SCOPES, SUBSCRIBED_EVENTS
from chatbot.wiring import build
from tests.conftest import ROOT
from tests.fakeslack import FakeSlack
from tests.slackrequests import command_body, event_body, shortcut_body, signed_headers
from tests.test_slack_http import settings_for

MANIFEST = ROOT / "deploy" / "slack-app-manifest.yaml"


def manifest() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(Path(MANIFEST).read_text(encoding="utf-8"))
    return data


@pytest.fixture
def bot(fake_slack: FakeSlack) -> Iterator[Bot]:
    bot = build(settings_for(fake_slack))
    yield bot
    bot.close()


def dispatch(bot: Bot, body: str, content_type: str = "application/json") -> int:
    headers = {**signed_headers(body), "Content-Type": content_type}
    return bot.app.dispatch(BoltRequest(body=body, headers=headers)).status


def test_manifest_command_events_and_scopes_match_the_app() -> None:
    data = manifest()
    assert [c["command"] for c in data["features"]["slash_commands"]] == [ids.COMMAND]
    bot_events = data["settings"]["event_subscriptions"]["bot_events"]
    assert sorted(bot_events) == sorted(e for events in SUBSCRIBED_EVENTS.values() for e in events)
    assert sorted(data["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES)
    assert data["settings"]["interactivity"]["is_enabled"] is True
    assert [s["callback_id"] for s in data["features"]["shortcuts"]] == [ids.SHORTCUT]
    assert data["features"]["unfurl_domains"] == ["github.com"]
    assert data["features"]["app_home"]["home_tab_enabled"] is True
    assert data["features"]["app_home"]["messages_tab_enabled"] is True
    assert data["settings"]["socket_mode_enabled"] is True
    for url in (
        data["features"]["slash_commands"][0]["url"],
        data["settings"]["event_subscriptions"]["request_url"],
        data["settings"]["interactivity"]["request_url"],
    ):
        assert url.endswith("/slack/events")


def test_the_app_handles_every_event_the_manifest_subscribes_to(bot: Bot) -> None:
    delivered = {
        "app_mention": {
            "type": "app_mention",
            "channel": "C1",
            "user": "U1",
            "text": "<@UBOT0001> hi",
            "ts": "1.1",
        },
        "message.channels": {
            "type": "message",
            "channel_type": "channel",
            "channel": "C1",
            "user": "U1",
            "text": "hi",
            "ts": "1.2",
        },
        "message.groups": {
            "type": "message",
            "channel_type": "group",
            "channel": "G1",
            "user": "U1",
            "text": "hi",
            "ts": "1.3",
        },
        "message.im": {
            "type": "message",
            "channel_type": "im",
            "channel": "D1",
            "user": "U1",
            "text": "compile",
            "ts": "1.4",
        },
        "link_shared": {
            "type": "link_shared",
            "channel": "C1",
            "user": "U1",
            "message_ts": "1.5",
            "links": [{"domain": "github.com", "url": "https://github.com/vllm-project/vllm/pull/53529"}],
        },
        "app_home_opened": {"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home"},
    }
    for bot_event in manifest()["settings"]["event_subscriptions"]["bot_events"]:
        assert dispatch(bot, event_body(delivered[bot_event])) == 200, bot_event
    unsubscribed = {"type": "reaction_added", "user": "U1", "reaction": "eyes", "item": {}}
    assert dispatch(bot, event_body(unsubscribed)) == 404


def test_the_app_answers_the_manifest_command_only(bot: Bot, fake_slack: FakeSlack) -> None:
    command = manifest()["features"]["slash_commands"][0]["command"]
    form = "application/x-www-form-urlencoded"
    assert dispatch(bot, command_body("help", fake_slack.response_url()), form) == 200
    other = command_body("help", fake_slack.response_url()).replace("%2Fvllm-digest", "%2Fother")
    assert command == "/vllm-digest"
    assert dispatch(bot, other, form) == 404


def test_the_app_answers_the_manifest_shortcut_only(bot: Bot, fake_slack: FakeSlack) -> None:
    form = "application/x-www-form-urlencoded"
    for shortcut in manifest()["features"]["shortcuts"]:
        body = shortcut_body(shortcut["callback_id"], "compile", fake_slack.response_url())
        assert dispatch(bot, body, form) == 200
    assert dispatch(bot, shortcut_body("other_shortcut", "compile", fake_slack.response_url()), form) == 404
