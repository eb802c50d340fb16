"""`/vllm-digest subscribe | unsubscribe | subscriptions`: a channel's PR of the day, from Slack.

A change is confirmed *in the channel* first, naming who made it, and stored only when Slack took
that post: it is also the check that the bot can post there. docs/daily.md: subscriptions.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.daily.picker import Pick
from chatbot.daily.subscription import (
    GrammarError,
    Subscription,
    Topic,
    effective_subscriptions,
    parse_subscribe,
)
from chatbot.daily.topics import Resolved
from chatbot.digest import Entry
from chatbot.slack import blocks, subscription_blocks
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.membership import ChannelMembers
from chatbot.slack.webapi import find_marked_message, never_sent
from chatbot.store import SubscriptionStore, utc_now

log = logging.getLogger(__name__)

COMMANDS = ("subscribe", "unsubscribe", "subscriptions")
_NOT_IN_CHANNEL = {"not_in_channel", "channel_not_found", "is_archived"}
# The confirmation's metadata: how a post that got no answer is found in the channel.
NOTICE_EVENT_TYPE = "vllm_digest_subscription"


@dataclass
class SubscriptionCommands:
    """The three subcommands; each returns the ephemeral answer for the asker."""

    store: SubscriptionStore
    configured: Sequence[Subscription]  # DAILY_CHANNELS as subscriptions
    defaults: Callable[[str], Subscription]  # a new channel's subscription before the request
    resolve: Callable[[list[str]], Resolved]
    client: WebClient
    language: Language
    admins: frozenset[str] = frozenset()
    clock: Callable[[], dt.datetime] = utc_now
    # The channel's pick for today in its zone (None without a subscription from Slack).
    pick_today: Callable[[str], tuple[Entry, Pick] | None] = lambda _channel: None
    # Who may change a channel's subscription: its members (a command names its channel, and a
    # forged one could name any); None only where nothing checks (tests of the grammar).
    members: ChannelMembers | None = None

    def handle(self, kind: str, words: str, channel: str, user: str) -> blocks.Message:
        if kind != "subscriptions" and self.members is not None and not self.members.is_member(channel, user):
            log.warning("not changing the subscription of %s: %s is not a member", channel, user)
            return blocks.render_text(Texts(self.language)("sub.not_member"))
        if kind == "subscribe":
            return self.subscribe(words, channel, user)
        if kind == "unsubscribe":
            return self.unsubscribe(words, channel, user)
        return self.subscriptions(channel, user)

    def today(self, channel: str) -> blocks.Message | None:
        """`today` in a subscribed channel: its own pick, saying so when its topics are used up."""
        found = self.pick_today(channel) if channel else None
        if found is None:
            return None
        entry, pick = found
        return subscription_blocks.render_channel_today(entry, pick, self.language)

    def current(self, channel: str) -> Subscription | None:
        """The channel's subscription: from Slack (the store), else from DAILY_CHANNELS."""
        stored = self.store.get(channel)
        if stored is not None:
            return stored
        return next((s for s in self.configured if s.channel == channel), None)

    def subscribe(self, words: str, channel: str, user: str) -> blocks.Message:
        texts = Texts(self.language)
        try:
            request = parse_subscribe(words)
        except GrammarError as exc:
            return blocks.render_text(texts("sub.bad", error=str(exc)))
        resolved = self.resolve(request.topic_words)
        if resolved.unknown:
            return blocks.render_text(texts("sub.unknown", words=", ".join(resolved.unknown)))
        before = self.current(channel)
        base = before or self.defaults(channel)
        after = replace(request.apply(base, resolved.topics), channel=channel, updated_by=user)
        confirmation = subscription_blocks.render_subscribed(
            after, user, self.language, changed=before is not None and before.source == "slack"
        )
        return self._confirm_then(channel, confirmation, lambda: self.store.put(after, now=self.clock()))

    def unsubscribe(self, words: str, channel: str, user: str) -> blocks.Message:
        texts = Texts(self.language)
        stored = self.store.get(channel)
        setting = next((s for s in self.configured if s.channel == channel), None)
        if not words.strip():
            if stored is None:
                return blocks.render_text(texts("sub.settings_only" if setting else "sub.none"))
            notice = subscription_blocks.render_unsubscribed(user, self.language, setting)
            return self._confirm_then(channel, notice, lambda: self.store.remove(channel))
        return self._drop_topics(words, stored or setting, channel, user)

    def _drop_topics(
        self, words: str, current: Subscription | None, channel: str, user: str
    ) -> blocks.Message:
        """`unsubscribe TOPIC …`: the subscription without those topics (each must be on it)."""
        texts = Texts(self.language)
        resolved = self.resolve(words.split())
        if resolved.unknown:
            return blocks.render_text(texts("sub.unknown", words=", ".join(resolved.unknown)))
        not_on = topics_not_on(resolved.topics, current)
        if current is None or not_on or not resolved.topics:
            labels = not_on or words.split()
            return blocks.render_text(texts("sub.not_subscribed_to", topics=", ".join(labels)))
        keys = {t.key for t in resolved.topics}
        kept: tuple[Topic, ...] = tuple(t for t in current.topics if t.key not in keys)
        after = replace(current, topics=kept, source="slack", cron="", updated_by=user)
        notice = subscription_blocks.render_subscribed(after, user, self.language, changed=True)
        return self._confirm_then(channel, notice, lambda: self.store.put(after, now=self.clock()))

    def subscriptions(self, channel: str, user: str) -> blocks.Message:
        every = effective_subscriptions(self.configured, self.store.all())
        if self.is_admin(user):
            return subscription_blocks.render_subscriptions(every, self.language, every_channel=True)
        mine = [s for s in every if s.channel == channel]
        return subscription_blocks.render_subscriptions(mine, self.language, every_channel=False)

    def is_admin(self, user: str) -> bool:
        """ADMIN_USERS, or a workspace admin or owner according to users.info."""
        if user in self.admins:
            return True
        try:
            info = self.client.users_info(user=user)
        except (SlackApiError, SlackClientError, OSError) as exc:
            log.warning("users.info %s failed (%s): not treated as an admin", user, exc)
            return False
        profile = info.get("user") or {}
        return bool(profile.get("is_admin") or profile.get("is_owner") or profile.get("is_primary_owner"))

    def _confirm_then(
        self, channel: str, notice: blocks.Message, change: Callable[[], object]
    ) -> blocks.Message:
        """Post the notice in the channel; only when Slack took it, make the change."""
        texts = Texts(self.language)
        payload = {"channel": channel, "id": uuid.uuid4().hex}
        mark = {"event_type": NOTICE_EVENT_TYPE, "event_payload": payload}
        sent_at = self.clock()
        try:
            self.client.chat_postMessage(
                channel=channel, text=notice["text"], blocks=notice["blocks"], metadata=mark
            )
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "unknown")
            log.warning("subscription notice in %s refused: %s", channel, error)
            key = "sub.not_in_channel" if error in _NOT_IN_CHANNEL else "sub.failed"
            return blocks.render_text(texts(key, error=error))
        except (SlackClientError, OSError) as exc:
            if never_sent(exc) or not self._notice_posted(channel, payload, sent_at):
                log.warning("subscription notice in %s failed: %s", channel, exc)
                return blocks.render_text(texts("sub.failed", error=type(exc).__name__))
            log.info(
                "subscription notice in %s: no answer from Slack (%s), found it in the channel", channel, exc
            )
        change()
        return blocks.render_text(texts("sub.done"))

    def _notice_posted(self, channel: str, mark: dict[str, str], sent_at: dt.datetime) -> bool:
        """Whether a notice whose post got no answer is in the channel after all (Slack stored it
        but answered after the client gave up): then the change stands, and asking the user to try
        again would confirm it twice."""
        since = sent_at - dt.timedelta(minutes=1)
        return find_marked_message(self.client, channel, NOTICE_EVENT_TYPE, mark, since) is not None


def topics_not_on(topics: Sequence[Topic], current: Subscription | None) -> list[str]:
    """The labels of `topics` a subscription is not on, to name in the refusal (all of them
    without a subscription)."""
    have = {t.key for t in current.topics} if current else set()
    return [t.label for t in topics if t.key not in have]
