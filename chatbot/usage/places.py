"""Where a search, question or vote was made, so the curator report never quotes private text.

The weekly report is posted to a channel others read; what someone typed in a direct message,
a private channel or App Home must not appear there. Each Slack request's conversation is noted
where it enters (`PlaceMiddleware`, a Bolt middleware: a contextvar, which the bot's thread
pools copy to the work they run), and the usage writer turns it into one word stored with the
row: `public`, `private`, `im` or `unknown`. Only `public` rows are quoted; the rest are counted.

The word comes from the event itself when Slack says (`channel_type` of message events), a
`D…` id is a direct message, else `conversations.info` (cached per channel for `KEEP_KIND`). A
failed lookup is `unknown`: not quoted.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from slack_bolt import BoltRequest, BoltResponse
from slack_bolt.middleware import Middleware
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.expiring import ExpiringCache

log = logging.getLogger(__name__)

Place = Literal["public", "private", "im", "unknown"]
QUOTABLE: Place = "public"
KEEP_KIND = 3600.0
MAX_CHANNELS = 5000
# Message events' channel_type → place.
EVENT_CHANNEL_TYPES: dict[str, Place] = {
    "channel": "public",
    "group": "private",
    "mpim": "private",
    "im": "im",
}

# (channel id, what the request said about it) of the request being handled; None outside one.
asked_in: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("asked_in", default=None)


def conversation_of(body: dict[str, Any]) -> tuple[str, str] | None:
    """(channel id, hint) a request came from: a command's channel, an event's, a press's; None
    for App Home and modal submissions (which have no conversation: private)."""
    if "command" in body:
        return _named(body.get("channel_id"), "")
    event = body.get("event") or {}
    if event:
        return _named(event.get("channel"), str(event.get("channel_type") or ""))
    container = body.get("container") or {}
    return _named((body.get("channel") or {}).get("id") or container.get("channel_id"), "")


def _named(channel: Any, hint: str) -> tuple[str, str] | None:
    return (str(channel), hint) if channel else None


class PlaceMiddleware(Middleware):
    """Notes the request's conversation in `asked_in` (left set for the dispatch, as the request
    id is: each request runs in its own context)."""

    def process(
        self, *, req: BoltRequest, resp: BoltResponse, next: Callable[[], BoltResponse]
    ) -> BoltResponse | None:
        asked_in.set(conversation_of(req.body))
        return next()


def conversation_kind(client: Any) -> Callable[[str], Place]:
    """A channel's place from `conversations.info`; raises on Slack errors."""

    def lookup(channel: str) -> Place:
        info = client.conversations_info(channel=channel).get("channel") or {}
        if info.get("is_im"):
            return "im"
        if info.get("is_private") or info.get("is_mpim") or info.get("is_group"):
            return "private"
        return "public" if info.get("is_channel") else "unknown"

    return lookup


class Places:
    """`place(conversation)` → the word stored with a usage row (see the module docstring)."""

    def __init__(
        self,
        kind_of: Callable[[str], Place] | None,
        *,
        keep: float = KEEP_KIND,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kind_of = kind_of
        self._cache: ExpiringCache[str, Place] = ExpiringCache(keep, MAX_CHANNELS, clock)

    def __call__(self, conversation: tuple[str, str] | None) -> Place:
        if conversation is None:
            return "private"  # App Home, a modal: only the person saw it
        channel, hint = conversation
        if hint in EVENT_CHANNEL_TYPES:
            return EVENT_CHANNEL_TYPES[hint]
        if channel.startswith("D"):
            return "im"
        return self._looked_up(channel)

    def _looked_up(self, channel: str) -> Place:
        cached = self._cache.get(channel)
        if cached is not None:
            return cached
        if self.kind_of is None:
            return "unknown"
        try:
            kind = self.kind_of(channel)
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("kind of %s unknown (%s): its usage is not quoted", channel, exc)
            return "unknown"
        self._cache.put(channel, kind)
        return kind
