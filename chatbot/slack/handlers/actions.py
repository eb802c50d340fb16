"""Button presses: Share to channel, More results, and the PR link (which only needs an ack).

These run as Bolt lazy listeners: the press is acknowledged at once, the work (a chat.postMessage,
a response-URL post) follows on a worker thread.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError

from chatbot.digest import Entry, FactsLookup, PrFacts, no_facts
from chatbot.slack import blocks
from chatbot.slack.handlers.command import Answers
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.ledger import SHARE_WINDOW, InMemoryLedger, Ledger, share_key
from chatbot.slack.membership import ChannelMembers
from chatbot.slack.webapi import find_marked_message, maybe_stored, send
from chatbot.store import OutageQueue, ThreadRegistry, attempt_or_hold
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

ENTRY_EVENT_TYPE = "vllm_digest_entry"
NOT_IN_CHANNEL = {"not_in_channel", "channel_not_found", "is_archived"}


def just_ack(ack: Any) -> None:
    """Acknowledge a press, an event or a modal submission (closing it); the work, if any,
    happens in a lazy listener."""
    ack()


def entry_metadata(entry: Entry) -> dict[str, Any]:
    """Message metadata that names the entry a bot post is about (readable back from history)."""
    return {"event_type": ENTRY_EVENT_TYPE, "event_payload": {"entry_id": entry.id}}


@dataclass
class ActionHandlers:
    """Lazy listeners for the buttons of our messages."""

    answers: Answers
    lookup: Callable[[str], Entry | None]
    threads: ThreadRegistry
    language: Language
    members: ChannelMembers
    languages: Callable[[str | None], Language] | None = None
    pick_channel: Callable[[Entry, dict[str, Any], Any], None] | None = None

    def language_of(self, body: dict[str, Any]) -> Language:
        """The presser's language (their Slack locale under DIGEST_LANGUAGE=auto)."""
        if self.languages is None:
            return self.language
        return self.languages((body.get("user") or {}).get("id"))

    # One entry is shared into one place at most once a SHARE_WINDOW (double clicks, two people).
    shares: Ledger = field(default_factory=InMemoryLedger)
    facts: FactsLookup = no_facts  # GitHub's facts: the shared card shows the PR's state

    # Holds a press the database could not take (None: raise).
    outage: OutageQueue | None = None
    usage: UsageRecorder | None = None  # counts each share

    def share(self, body: dict[str, Any], client: Any, respond: Any) -> None:
        """Post the entry's card to the channel as the bot, and register its thread; from a DM,
        ask which channel first (`pick_channel`). While the database is away the press is held
        (shared once it is back, or the presser told once)."""
        user = (body.get("user") or {}).get("id")
        attempt_or_hold(
            self.outage,
            f"share:{body.get('trigger_id')}:{_action_value(body)}",
            f"the Share press of {_action_value(body)} by {user}",
            lambda: self.share_once(body, client, respond),
            lambda _reason: _tell(respond, Texts(self.language_of(body))("share.outage")),
        )

    def share_once(self, body: dict[str, Any], client: Any, respond: Any) -> None:
        """`share`; raises a store failure, with nothing posted, while the database is away."""
        language = self.language_of(body)
        texts = Texts(language)
        entry = self.lookup(_action_value(body))
        if entry is None:
            _tell(respond, texts("entry.gone"))
            return
        if self.pick_channel is not None and in_direct_message(body):
            self.pick_channel(entry, body, client)
            return
        channel, thread_ts = pressed_in(body)
        if not channel:
            log.warning("share of %s: the press names no channel", entry.id)
            return
        if not may_share(self.members, channel, body, entry):
            _tell(respond, texts("share.not_member"))
            return
        where = share_key(channel, thread_ts, entry.id)
        if not self.shares.mark_handled(where, within=SHARE_WINDOW):
            log.info("not sharing %s to %s again within %s", entry.id, channel, SHARE_WINDOW)
            _tell(respond, texts("share.duplicate"))
            return
        try:
            share_card(
                client,
                self.threads,
                channel,
                entry,
                language,
                sharer_name(body),
                self.facts(entry),
                self.usage,
            )
        except SlackApiError as exc:
            self.shares.forget_handled(where)
            _tell(respond, share_failure(exc, texts, entry, channel))
            return
        _tell(respond, texts("share.done"))

    def more(self, body: dict[str, Any], respond: Any) -> None:
        """Replace the results message with the next page (a value we cannot read: say so)."""
        language = self.language_of(body)
        more = blocks.parse_more_value(_action_value(body))
        if more is None:
            _tell(respond, Texts(language)("more.unreadable"))
            return
        page = self.answers.page(*more, language)
        respond(**page, response_type="ephemeral", replace_original=True)


def in_direct_message(body: dict[str, Any]) -> bool:
    """A press in a DM with the bot (IM channel ids start with D; Slack names it directmessage)."""
    channel = body.get("channel") or {}
    return str(channel.get("id", "")).startswith("D") or channel.get("name") == "directmessage"


def pressed_in(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """(channel, thread ts) of the message whose button was pressed."""
    container = body.get("container") or {}
    return (body.get("channel") or {}).get("id") or container.get("channel_id"), container.get("thread_ts")


def may_share(members: ChannelMembers, channel: str, body: dict[str, Any], entry: Entry) -> bool:
    """Whether the person pressing may have the bot post into `channel`: only a member of it
    (the request names the channel; Slack's UI offering it is not a check). Refusals are logged."""
    user = (body.get("user") or {}).get("id")
    if members.is_member(channel, str(user) if user else None):
        return True
    log.warning("not sharing %s to %s: %s is not a member", entry.id, channel, user)
    return False


def sharer_name(body: dict[str, Any]) -> str | None:
    user = body.get("user") or {}
    name = user.get("name") or user.get("username")
    return str(name) if name else None


def share_failure(exc: SlackApiError, texts: Texts, entry: Entry, channel: str) -> str:
    """What to tell the sharer when Slack refused the post (logged here)."""
    error = str(exc.response.get("error", "unknown"))
    log.warning("sharing %s to %s failed: %s", entry.id, channel, error)
    return texts("share.not_in_channel") if error in NOT_IN_CHANNEL else texts("share.failed", error=error)


def share_card(
    client: Any,
    threads: ThreadRegistry,
    channel: str,
    entry: Entry,
    language: Language,
    sharer: str | None,
    facts: PrFacts | None = None,
    usage: UsageRecorder | None = None,
) -> str:
    """Post the entry's card as the bot and register its thread (a share, for `usage`); the message ts. Raises
    SlackApiError (e.g. not_in_channel) when Slack refuses, and a connection error when the card
    is not in the channel after it (a post whose answer was lost is found there, not sent again)."""
    card = blocks.render_entry_card(entry, language, shared_by=sharer, facts=facts)
    sent_at = dt.datetime.now(dt.UTC)
    try:
        ts = send(client, channel, card, metadata=entry_metadata(entry))
    except (SlackApiError, OSError) as exc:  # no answer or a 5xx: Slack may have the card; look, never resend
        if not maybe_stored(exc):
            raise
        ts = posted_card(client, channel, entry, sent_at, exc)
    threads.register(channel, ts, entry.id)
    if usage is not None:
        usage.shared(entry.id)
    return ts


def posted_card(
    client: Any, channel: str, entry: Entry, sent_at: dt.datetime, error: OSError | SlackApiError
) -> str:
    """The ts of the card a post that got no answer left in the channel (Slack acted, the answer
    was lost), so its thread is registered and nobody is told to share it again; else `error`."""
    since = sent_at - dt.timedelta(minutes=1)
    found = find_marked_message(client, channel, ENTRY_EVENT_TYPE, {"entry_id": entry.id}, since)
    if found is None:
        raise error
    log.info(
        "sharing %s to %s: no answer from Slack (%s), found the card in the channel", entry.id, channel, error
    )
    return found[0]


def _tell(respond: Any, text: str) -> None:
    """An ephemeral note to the presser, under the message they pressed in."""
    respond(**blocks.render_text(text), response_type="ephemeral", replace_original=False)


def _action_value(body: dict[str, Any]) -> str:
    return str(body["actions"][0].get("value", ""))
