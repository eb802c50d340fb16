"""Messages and mentions: handed to the follow-up handler (handlers/followups.py).

The listener runs lazily (after the ack, on the listener pool), so answering never holds the
HTTP response; it passes the event with its envelope's id and retry count for deduplication.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import BoltContext, BoltRequest
from slack_sdk import WebClient

from chatbot.slack.handlers.followups import Delivery

FollowUpHandler = Callable[[Delivery, WebClient], None]
"""Gets the delivered event (message or app_mention) and a Web API client to answer with."""


def follow_up_listener(handler: FollowUpHandler) -> Callable[..., None]:
    """The lazy listener for message and app_mention events."""

    def on_message(
        event: dict[str, Any],
        body: dict[str, Any],
        context: BoltContext,
        request: BoltRequest,
        client: WebClient,
    ) -> None:
        retry = request.headers.get("x-slack-retry-num", [body.get("retry_attempt") or 0])[0]
        handler(
            Delivery(
                event=event,
                event_id=body.get("event_id"),
                bot_user_id=context.bot_user_id,
                retry=int(retry or 0),
            ),
            client,
        )

    return on_message
