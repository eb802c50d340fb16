"""The App Home tab and the modals opened from it.

`app_home_opened` (tab "home") publishes the Home view for that person, in their language,
listing only the subscribed channels that person is in, as channel mentions (`<#C…>`) that each
Slack client shows in its viewer's own terms. The view carries a stamp of what it was built from
— library generation, the local day, the language, the channels shown — in its `private_metadata`; Slack sends the current view with the event, so a Home
that is still current is not published again, and one built before the digest changed or the
day turned is rebuilt. The stamp lives in Slack, so every replica sees the same.

The search box (Enter) opens a modal with the results; *Open* on any entry (Home, the results
modal) shows the full card in a modal, pushed on top when it comes from a modal.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from chatbot.digest import Entry, FactsLookup, no_facts
from chatbot.slack.handlers.command import Searchable, search_counted
from chatbot.slack.i18n import Language
from chatbot.slack.membership import ChannelMembers
from chatbot.slack.views import View, render_entry_modal, render_home, render_search_modal
from chatbot.text import visible_text
from chatbot.usage.recorder import UsageRecorder

log = logging.getLogger(__name__)

SEARCH_RESULTS = 10


@dataclass
class HomeTab:
    """Lazy listeners for the Home tab, its search box and the Open buttons."""

    index: Searchable
    today: Callable[[], Entry | None]
    latest: Callable[[int], Sequence[Entry]]
    lookup: Callable[[str], Entry | None]
    channels: Callable[[], Sequence[str]]
    generation: Callable[[], int]
    day: Callable[[], dt.date]
    languages: Callable[[str | None], Language]
    members: ChannelMembers
    facts: FactsLookup = no_facts  # GitHub's facts: an opened entry's card shows the PR's state
    usage: UsageRecorder | None = None  # counts searches

    def stamp(self, lang: Language, channels: Sequence[str]) -> str:
        """What a Home was built from; the viewer's channels are in it, so joining or leaving one
        rebuilds it."""
        return f"{self.generation()}|{self.day().isoformat()}|{lang}|{','.join(channels)}"

    def visible_channels(self, user: str) -> list[str]:
        """The subscribed channels this viewer is in: nobody is shown a channel they cannot see."""
        return self.members.visible(self.channels(), user)

    def view(self, lang: Language, channels: Sequence[str]) -> View:
        return render_home(
            today=self.today(),
            newest=self.latest(5),
            topics=self.index.topics(),
            channels=channels,
            day=self.day(),
            lang=lang,
            stamp=self.stamp(lang, channels),
        )

    def opened(self, event: dict[str, Any], client: WebClient) -> None:
        user = event.get("user")
        if event.get("tab", "home") != "home" or not user:
            return
        lang = self.languages(str(user))
        channels = self.visible_channels(str(user))
        shown = (event.get("view") or {}).get("private_metadata")
        if shown == self.stamp(lang, channels):
            return
        try:
            client.views_publish(user_id=str(user), view=self.view(lang, channels))
        except (SlackApiError, SlackClientError) as exc:
            log.warning("publishing Home for %s failed: %s", user, exc)

    def search(self, body: dict[str, Any], client: WebClient) -> None:
        query = " ".join(visible_text(str(body["actions"][0].get("value") or "")).split())
        if not query:
            return
        lang = self.languages(_user(body))
        self._show(
            body,
            client,
            render_search_modal(search_counted(self.index, self.usage, "home", query, SEARCH_RESULTS), lang),
        )

    def open_entry(self, body: dict[str, Any], client: WebClient) -> None:
        entry = self.lookup(str(body["actions"][0].get("value") or ""))
        if entry is not None:
            self._show(
                body, client, render_entry_modal(entry, self.languages(_user(body)), self.facts(entry))
            )

    @staticmethod
    def _show(body: dict[str, Any], client: WebClient, view: View) -> None:
        """Open a modal, or push it onto the modal the press came from (Slack allows three)."""
        trigger = str(body.get("trigger_id") or "")
        try:
            if (body.get("view") or {}).get("type") == "modal":
                client.views_push(trigger_id=trigger, view=view)
            else:
                client.views_open(trigger_id=trigger, view=view)
        except (SlackApiError, SlackClientError) as exc:
            log.warning("opening a modal failed: %s", exc)


def _user(body: dict[str, Any]) -> str | None:
    user = (body.get("user") or {}).get("id")
    return str(user) if user else None
