"""Messages and mentions: handed to the follow-up answerer when the wiring provides one.

The answerer (chatbot.answers, wired later) decides whether a message is a follow-up in one of
our threads; until it is wired these listeners only acknowledge, so Slack does not retry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient

FollowUpHandler = Callable[[dict[str, Any], WebClient], None]
"""Gets the Slack event (message or app_mention) and a Web API client to answer with."""


def just_ack(ack: Any) -> None:
    ack()


def follow_up_listener(handler: FollowUpHandler | None) -> Callable[..., None]:
    """The lazy listener for message and app_mention events."""

    def on_message(event: dict[str, Any], client: WebClient) -> None:
        if handler is not None:
            handler(event, client)

    return on_message
