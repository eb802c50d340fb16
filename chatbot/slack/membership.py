"""Who is in a channel: the bot posts for a person only where that person could post themselves.

A share names its channel in the request, and a forged or replayed one can name any: every share
path asks `ChannelMembers.is_member` first. A failed lookup is not cached and answers "not a
member": the bot never posts on a guess. docs/slack.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.expiring import ExpiringCache
from chatbot.slack.views import CHANNEL_ID

log = logging.getLogger(__name__)

KEEP_MEMBERS = 60.0
MAX_CHANNELS = 500
PAGE_SIZE = 1000


def slack_members(client: Any) -> Callable[[str], frozenset[str]]:
    """A channel's member ids from `conversations.members`, every page; raises on Slack errors."""

    def lookup(channel: str) -> frozenset[str]:
        members: set[str] = set()
        cursor: str | None = None
        while True:
            page = client.conversations_members(channel=channel, limit=PAGE_SIZE, cursor=cursor)
            members.update(str(m) for m in page.get("members") or [])
            cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
            if not cursor:
                return frozenset(members)

    return lookup


class ChannelMembers:
    """`is_member(channel, user)` and `visible(channels, user)`, cached briefly per channel."""

    def __init__(
        self,
        members_of: Callable[[str], frozenset[str]],
        *,
        keep: float = KEEP_MEMBERS,
        max_channels: int = MAX_CHANNELS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.members_of = members_of
        self._cache: ExpiringCache[str, frozenset[str]] = ExpiringCache(keep, max_channels, clock)

    def members(self, channel: str) -> frozenset[str] | None:
        """The channel's members (cached), or None when Slack would not say (logged)."""
        cached = self._cache.get(channel)
        if cached is not None:
            return cached
        try:
            members = self.members_of(channel)
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("members of %s unknown (%s): treated as not a member", channel, exc)
            return None
        self._cache.put(channel, members)
        return members

    def is_member(self, channel: str, user: str | None) -> bool:
        """Whether `user` is in `channel` (False when either is unknown or Slack would not say)."""
        if not user or not CHANNEL_ID.match(channel):
            return False
        members = self.members(channel)
        return members is not None and user in members

    def visible(self, channels: Iterable[str], user: str | None) -> list[str]:
        """The channel ids among `channels` that `user` is in, in order; a channel given by name
        is never listed (its members cannot be asked for, so nobody is shown it)."""
        return [c for c in dict.fromkeys(channels) if self.is_member(c, user)]
