"""Posting a rendered message as the bot: one call shape for every handler.

Our messages carry their own cards, so Slack's link and media previews are always off. `send`
raises Slack's errors for callers that decide what a failure means (an apology, a reason shown
to the sharer); `post` logs them and returns None, for callers that have nothing more to say.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.slack.blocks import Message

log = logging.getLogger(__name__)


def send(client: Any, channel: str, message: Message, *, thread_ts: str | None = None, **extra: Any) -> str:
    """chat.postMessage of `message` (in the thread `thread_ts`, when given); the posted ts.
    Raises SlackApiError / SlackClientError."""
    if thread_ts:
        extra["thread_ts"] = thread_ts
    posted = client.chat_postMessage(
        channel=channel,
        text=message["text"],
        blocks=message["blocks"],
        unfurl_links=False,
        unfurl_media=False,
        **extra,
    )
    return str(posted.get("ts") or "")


def post(
    client: Any, channel: str, message: Message, *, what: str, thread_ts: str | None = None
) -> str | None:
    """`send`, with a failure logged as `what … failed` instead of raised: the ts, or None."""
    try:
        return send(client, channel, message, thread_ts=thread_ts) or None
    except (SlackApiError, SlackClientError) as exc:
        log.warning("%s in %s failed: %s", what, f"{channel} {thread_ts}" if thread_ts else channel, exc)
        return None
