"""Direct messages to the bot, and sharing to a channel from one.

A DM reads like the slash command's text; a topic query gets the best entry's card, whose thread
then takes follow-ups. *Share to channel* in a DM has no channel: it opens a picker, and the
submission alone is no proof of membership (`ChannelMembers`). docs/slack.md: direct messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.digest import Entry, FactsLookup, no_facts
from chatbot.slack import action_ids as ids
from chatbot.slack import blocks
from chatbot.slack.handlers.actions import may_share, share_card, share_failure, sharer_name
from chatbot.slack.handlers.command import Answers, Searchable, parse, search_counted
from chatbot.slack.handlers.followups import ANSWERED_SUBTYPES, query_language, strip_mentions
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.ledger import Ledger, first_delivery, message_key
from chatbot.slack.membership import ChannelMembers
from chatbot.slack.views import render_dm_answer, render_share_picker
from chatbot.slack.webapi import post
from chatbot.store import OutageQueue, ThreadRegistry, attempt_or_hold
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

TOP_RESULTS = 3


def is_dm_query(event: dict[str, Any]) -> bool:
    """A person's own top-level message in a DM with the bot (not an edit, a bot, a reply)."""
    subtype = event.get("subtype")
    thread_ts = event.get("thread_ts")
    return (
        event.get("type") == "message"
        and event.get("channel_type") == "im"
        and not event.get("bot_id")
        and (subtype is None or subtype in ANSWERED_SUBTYPES)
        and bool(event.get("user"))
        and (not thread_ts or thread_ts == event.get("ts"))
    )


def dm_query_place(event: dict[str, Any], bot_user_id: str | None) -> tuple[str, str] | None:
    """(channel, ts) of a DM query to answer; None for anything else (the bot's own messages too)."""
    channel, ts = str(event.get("channel") or ""), str(event.get("ts") or "")
    if not is_dm_query(event) or event.get("user") == bot_user_id or not channel or not ts:
        return None
    return channel, ts


@dataclass
class DirectMessages:
    """Lazy listener for DM queries, and the channel picker for Share to channel in a DM."""

    index: Searchable
    lookup: Callable[[str], Entry | None]
    threads: ThreadRegistry
    handled: Ledger
    languages: Callable[[str | None], Language]
    members: ChannelMembers
    answers: Answers | None = None
    facts: FactsLookup = no_facts  # GitHub's facts: the shared card shows the PR's state
    outage: OutageQueue | None = None  # holds a DM the database could not take (None: raise)
    usage: UsageRecorder | None = None  # counts searches, shares, turned-away deliveries

    def __call__(
        self, event: dict[str, Any], body: dict[str, Any], context: BoltContext, client: WebClient
    ) -> None:
        place = dm_query_place(event, context.bot_user_id)
        if place is None:
            return
        attempt_or_hold(
            self.outage,
            f"dm:{place[0]}:{place[1]}",
            f"the direct message {place[0]} {place[1]} from {event.get('user')}",
            lambda: self.answer_once(event, place, client),
            lambda _reason: self.tell_unanswered(event, place[0], client),
        )

    def tell_unanswered(self, event: dict[str, Any], channel: str, client: WebClient) -> None:
        """The database stayed away: say so once, where the question was asked."""
        query = strip_mentions(str(event.get("text") or ""))
        text = Texts(query_language(query, self.languages(str(event.get("user")))))("followup.outage")
        client.chat_postMessage(channel=channel, text=text)

    def answer_once(self, event: dict[str, Any], place: tuple[str, str], client: WebClient) -> None:
        """Mark the message handled, then answer it (a retry or a second delivery: nothing);
        raises a store failure, with nothing posted, while the database is away."""
        if not first_delivery(self.handled, message_key(*place), self.usage):  # retries: the same place
            return
        channel = place[0]
        query = strip_mentions(str(event.get("text") or ""))
        answer, owner = self.answer(query, query_language(query, self.languages(str(event.get("user")))))
        posted = post(client, channel, answer, what="DM answer")
        if posted is not None and owner is not None:
            self.threads.register(channel, posted, owner.id)
            if self.usage is not None:
                self.usage.shared(owner.id)

    def answer(self, query: str, lang: Language) -> tuple[blocks.Message, Entry | None]:
        """The answer to a DM, and the entry whose card it is (its thread takes follow-ups):
        the command's answer for `help`, `today`, …, else the best matches of a topic query."""
        request = parse(query)
        if request.kind != "search" and self.answers is not None:
            answer = self.answers.answer(request, lang)
            return answer, self.answers.today() if request.kind == "today" else None
        result = search_counted(self.index, self.usage, "dm", query, TOP_RESULTS)
        return render_dm_answer(result, lang), result.hits[0].entry if result.hits else None

    def pick_channel(self, entry: Entry, body: dict[str, Any], client: Any) -> None:
        """Share to channel from a DM: open the channel picker."""
        lang = self.languages((body.get("user") or {}).get("id"))
        try:
            client.views_open(trigger_id=body.get("trigger_id"), view=render_share_picker(entry, lang))
        except (SlackApiError, SlackClientError) as exc:
            log.warning("opening the channel picker failed: %s", exc)

    def share_picked(self, ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient) -> None:
        """The picker's submission: post the card to the picked channel, or say why not."""
        lang = self.languages((body.get("user") or {}).get("id"))
        texts = Texts(lang)
        picked = ids.submitted(view, ids.SHARE_CHANNEL, ids.SHARE_CHANNEL, "selected_conversation")
        entry = self.lookup(str(view.get("private_metadata") or ""))
        if entry is None or not picked:
            reason = texts("entry.gone" if entry is None else "share.pick_none")
            ack(response_action="errors", errors={ids.SHARE_CHANNEL: reason})
            return
        if not may_share(self.members, picked, body, entry):
            ack(response_action="errors", errors={ids.SHARE_CHANNEL: texts("share.not_member")})
            return
        try:
            share_card(
                client, self.threads, picked, entry, lang, sharer_name(body), self.facts(entry), self.usage
            )
        except SlackApiError as exc:
            reason = share_failure(exc, texts, entry, picked)
            ack(response_action="errors", errors={ids.SHARE_CHANNEL: reason})
            return
        except SlackClientError as exc:
            ack(
                response_action="errors",
                errors={ids.SHARE_CHANNEL: texts("share.failed", error=str(exc)[:80])},
            )
            return
        ack()
