"""Messages and mentions: handed to the follow-up handler (handlers/followups.py).

The listener runs lazily (after the ack, on the listener pool), so answering never holds the
HTTP response; it passes the event with its envelope's id and retry count for deduplication.
The event is already acknowledged by then, so Slack will not send it again: when handling fails
(the store is down, say), what was lost is logged at ERROR in one line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from slack_bolt import BoltContext, BoltRequest
from slack_sdk import WebClient

from chatbot.slack.handlers.followups import Delivery

log = logging.getLogger(__name__)

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
        try:
            handler(
                Delivery(
                    event=event,
                    event_id=body.get("event_id"),
                    bot_user_id=context.bot_user_id,
                    retry=int(retry or 0),
                ),
                client,
            )
        except Exception as exc:
            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            log.error(
                "lost a %s: not answered (event %s, channel %s, ts %s, thread %s, user %s): %s: %s",
                event.get("type"),
                body.get("event_id"),
                event.get("channel"),
                event.get("ts"),
                event.get("thread_ts"),
                event.get("user"),
                type(exc).__name__,
                reason,
            )

    return on_message
