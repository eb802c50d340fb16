"""Posting to Slack as the bot: one call shape (`send`, `post`), and one rule for when the answer
is lost. Our messages carry their own cards, so Slack's link and media previews are always off.

A post that got no answer (a timeout, a dropped connection) or a 5xx may be stored all the same:
it is looked for in the channel by its metadata, never sent again. Only a request that certainly
never left (connection refused, host not found) failed for sure. An adapter below the rest of
chatbot.slack (tests/test_architecture.py LAYERS): the daily poster and announcer use it too.
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

log = logging.getLogger(__name__)

# Slack errors worth another try later; every other error code is permanent (a setup problem).
TRANSIENT_ERRORS = {"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"}


@dataclass(frozen=True)
class SlackMessage:
    """What chat.postMessage gets: fallback text and Block Kit blocks."""

    text: str
    blocks: list[dict[str, Any]]


def never_sent(error: BaseException) -> bool:
    """True only when a request certainly did not reach Slack: the connection was refused or the
    host was not found. A timeout or a dropped connection may come after Slack acted on it."""
    reason = error.reason if isinstance(error, URLError) else error
    return isinstance(reason, ConnectionRefusedError | socket.gaierror)


def maybe_stored(error: BaseException) -> bool:
    """A post answered with a 5xx, or a connection error after it may have left: Slack may have
    stored it (the post-once rule)."""
    if isinstance(error, SlackApiError):
        return error.response is not None and error.response.status_code >= 500
    return isinstance(error, SlackClientError | OSError) and not never_sent(error)


def slack_refusal(error: SlackApiError) -> tuple[str, int, bool]:
    """(error code, HTTP status, transient) of a Slack answer that refused a call: transient when a
    later try may succeed (429, 5xx, `ratelimited`, `internal_error`, …), else a setup problem."""
    status_code = error.response.status_code
    code = str(error.response.get("error") or f"HTTP {status_code}")
    return code, status_code, status_code == 429 or status_code >= 500 or code in TRANSIENT_ERRORS


def send(
    client: Any, channel: str, message: dict[str, Any], *, thread_ts: str | None = None, **extra: Any
) -> str:
    """chat.postMessage of a rendered message (in the thread `thread_ts`, when given); the posted
    ts. Raises Slack's errors for callers that decide what a failure means."""
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
    client: Any, channel: str, message: dict[str, Any], *, what: str, thread_ts: str | None = None
) -> str | None:
    """`send`, with a failure logged as `what … failed` instead of raised: the ts, or None."""
    try:
        return send(client, channel, message, thread_ts=thread_ts) or None
    except (SlackApiError, SlackClientError) as exc:
        log.warning("%s in %s failed: %s", what, f"{channel} {thread_ts}" if thread_ts else channel, exc)
        return None


def find_marked_message(
    client: WebClient,
    channel: str,
    event_type: str,
    payload: dict[str, str],
    since: dt.datetime,
    pages: int = 5,
) -> tuple[str, dict[str, Any]] | None:
    """(ts, event payload) of a message since `since` whose metadata has the type and the payload
    values: how a post whose answer was lost (or a dead run's) is found. None also when the history
    cannot be read (logged): the caller then acts as if it is not there."""
    cursor: str | None = None
    try:
        for _ in range(pages):
            response = client.conversations_history(
                channel=channel,
                oldest=f"{since.timestamp():.6f}",
                include_all_metadata=True,
                limit=200,
                cursor=cursor,
            )
            found = _marked(response.get("messages") or [], event_type, payload)
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if found is not None or not cursor:
                return found
    except (SlackClientError, OSError) as exc:
        log.warning("%s in %s: could not read the channel history (%s)", event_type, channel, exc)
    return None


def _marked(
    messages: list[dict[str, Any]], event_type: str, payload: dict[str, str]
) -> tuple[str, dict[str, Any]] | None:
    for message in messages:
        metadata = message.get("metadata") or {}
        found = metadata.get("event_payload") or {}
        if metadata.get("event_type") == event_type and all(found.get(k) == v for k, v in payload.items()):
            return str(message["ts"]), found
    return None


class Sent(enum.Enum):
    POSTED = "posted"  # Slack took it
    FOUND = "found"  # no answer (or a 5xx), but the post is in the channel
    UNKNOWN = "unknown"  # no answer, and not in the channel (yet): it may still show up
    FAILED = "failed"  # certainly not stored, and a later try may succeed
    REFUSED = "refused"  # Slack said no for good (channel_not_found, invalid_blocks, …)


@dataclass(frozen=True)
class Posted:
    """How a post went: its ts when Slack has it; else Slack's error code and one line saying why."""

    sent: Sent
    ts: str | None = None
    channel: str = ""  # the channel id Slack answered with
    payload: dict[str, Any] = field(default_factory=dict)  # the found post's metadata payload
    code: str = ""
    detail: str = ""


def post_once(
    client: WebClient,
    channel: str,
    message: SlackMessage,
    metadata: dict[str, Any],
    find: Callable[[], tuple[str, dict[str, Any]] | None],
) -> Posted:
    """chat.postMessage with metadata, never sent twice: a post that may be stored is looked for
    with `find` (find_marked_message on its metadata) instead of sent again."""
    try:
        response = client.chat_postMessage(
            channel=channel,
            text=message.text,
            blocks=message.blocks,
            metadata=metadata,
            unfurl_links=False,
            unfurl_media=False,
        )
        return Posted(Sent.POSTED, str(response["ts"]), str(response.get("channel") or channel))
    except (SlackClientError, OSError) as exc:
        if not maybe_stored(exc):
            return _failed(exc)
        why = f"no answer from Slack ({str(exc) or type(exc).__name__})"
        if isinstance(exc, SlackApiError):
            code, status_code, _ = slack_refusal(exc)
            why = f"Slack answered {code} (HTTP {status_code}), the post may be stored"
    found = find()
    if found is None:
        return Posted(Sent.UNKNOWN, channel=channel, detail=why)
    return Posted(Sent.FOUND, found[0], channel, found[1], detail=why)


def _failed(error: BaseException) -> Posted:
    if not isinstance(error, SlackApiError):
        return Posted(Sent.FAILED, detail=f"cannot reach Slack: {error}")
    code, status_code, transient = slack_refusal(error)
    sent = Sent.FAILED if transient else Sent.REFUSED
    return Posted(sent, code=code, detail=f"Slack answered {code} (HTTP {status_code})")
