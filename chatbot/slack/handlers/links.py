"""PR link previews: `link_shared` → `chat.unfurl` with the curator's card, for PRs in the digest.

Slack sends `link_shared` for every link to an unfurl domain (github.com) in a message. Only
links to a pull request of a digest's repository that has an entry are answered — in any URL
form people paste (`/pull/N`, `/pull/N/`, `/pull/N/files`, `/pull/N/commits/…`, `?w=1`,
`#issuecomment-…`, `www.`, `http:`); every other link is left to other apps (the GitHub app).
A retried delivery carries the same event id; the handled-events store (shared by replicas)
lets one delivery unfurl. The preview's *Ask in a thread* button posts the full card in the
message's thread and registers that thread, so replies there are answered like follow-ups.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.digest import Entry, FactsLookup, no_facts
from chatbot.slack.blocks import render_entry_card
from chatbot.slack.handlers.actions import may_share
from chatbot.slack.i18n import Language, Texts
from chatbot.slack.ledger import Ledger, first_delivery, message_key
from chatbot.slack.membership import ChannelMembers
from chatbot.slack.views import render_link_preview
from chatbot.slack.webapi import post
from chatbot.store import ThreadRegistry
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

# A GitHub pull request URL: the repository slug and the number, then anything or nothing.
PR_URL = re.compile(
    r"https?://(?:www\.)?github\.com/(?P<repo>[\w.\-]+/[\w.\-]+)/pull/(?P<number>\d+)(?=$|[/?#>|\s)\]])",
    re.IGNORECASE,
)


def pr_of_url(url: str) -> tuple[str, int] | None:
    """(owner/name in lower case, number) when `url` is a pull request link, whole."""
    match = PR_URL.match(url.strip())
    if match is None:
        return None
    return match["repo"].casefold(), int(match["number"])


def entry_for_pr(entries: Sequence[Entry], repo: str | None, number: int) -> Entry | None:
    """The digest entry of PR `number` in `repo` (any digest repository when None)."""
    for entry in entries:
        if entry.pr == number and (repo is None or entry.repo.casefold() == repo):
            return entry
    return None


def entry_for_url(entries: Sequence[Entry], url: str) -> Entry | None:
    pr = pr_of_url(url)
    return entry_for_pr(entries, *pr) if pr else None


@dataclass
class LinkPreviews:
    """Lazy listener for `link_shared`, and the preview's *Ask in a thread* button."""

    entries: Callable[[], Sequence[Entry]]
    lookup: Callable[[str], Entry | None]
    threads: ThreadRegistry
    handled: Ledger
    language: Language
    members: ChannelMembers
    facts: FactsLookup = no_facts  # GitHub's facts: the card in the thread shows the PR's state
    usage: UsageRecorder | None = None  # counts turned-away deliveries and cards put in threads

    def unfurls(self, event: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """URL → preview for the event's links that are PRs in the digest (a link that is not
        an object with a URL is skipped, not the reason the others go unanswered)."""
        entries = self.entries()
        out: dict[str, dict[str, Any]] = {}
        links = event.get("links")
        for shared in links if isinstance(links, list) else []:
            url = shared.get("url") if isinstance(shared, dict) else None
            if not isinstance(url, str):
                continue
            entry = entry_for_url(entries, url)
            if entry is not None and url not in out:
                out[url] = render_link_preview(entry, self.language)
        return out

    def __call__(self, event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        unfurls = self.unfurls(event)
        if not unfurls or not self.first_delivery(event, body):
            return
        try:
            client.chat_unfurl(unfurls=unfurls, **unfurl_target(event))
        except (SlackApiError, SlackClientError) as exc:
            log.warning("unfurling %s failed: %s", ", ".join(unfurls), exc)

    def first_delivery(self, event: dict[str, Any], body: dict[str, Any]) -> bool:
        """Once per message (or composer unfurl), across retries and replicas; the key is apart
        from the follow-up mark of the same message, which may also be a question in a thread."""
        where_key = str(event.get("message_ts") or event.get("unfurl_id") or body.get("event_id") or "")
        channel_key = str(event.get("channel") or "composer")
        key = message_key(channel_key, f"unfurl:{where_key}")
        if where_key and not first_delivery(self.handled, key, self.usage):
            log.info("link_shared %s %s already unfurled", channel_key, where_key)
            return False
        return True

    def ask_in_thread(self, body: dict[str, Any], client: WebClient, respond: Any) -> None:
        """Post the entry's card under the message that holds the preview; its thread is ours.
        Only for a member of the channel (the press names it): anyone else is told, ephemerally."""
        entry = self.lookup(str(body["actions"][0].get("value") or ""))
        channel, parent = preview_message(body)
        if entry is None or not channel or not parent:
            return
        if not may_share(self.members, channel, body, entry):
            tell_ephemerally(respond, Texts(self.language)("share.not_member"))
            return
        if self.threads.entry_for(channel, parent) == entry.id:
            return  # pressed again: the card is already in the thread
        card = render_entry_card(entry, self.language, facts=self.facts(entry))
        if post(client, channel, card, what=f"card for {entry.id}", thread_ts=parent) is not None:
            self.threads.register(channel, parent, entry.id)
            if self.usage is not None:
                self.usage.shared(entry.id)


def tell_ephemerally(respond: Any, text: str) -> None:
    """A note only the presser sees, at the press's response URL (logged when there is none)."""
    if respond is None:
        log.warning("could not tell the presser (no response URL): %s", text)
        return
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except (ValueError, SlackApiError, SlackClientError, OSError) as exc:
        log.warning("could not tell the presser: %s", exc)


def unfurl_target(event: dict[str, Any]) -> dict[str, Any]:
    """Where chat.unfurl answers: the message, or links still in the composer (no message yet:
    Slack names them by unfurl id and source)."""
    if event.get("unfurl_id") and event.get("source"):
        return {"unfurl_id": event["unfurl_id"], "source": event["source"]}
    return {"channel": event.get("channel"), "ts": event.get("message_ts")}


def preview_message(body: dict[str, Any]) -> tuple[str, str]:
    """(channel, ts) of the message holding the pressed preview: the thread it sits in, if any."""
    container = body.get("container") or {}
    channel = str((body.get("channel") or {}).get("id") or container.get("channel_id") or "")
    parent = str(container.get("thread_ts") or container.get("message_ts") or "")
    return channel, parent
