"""Builders for the daily post (store, poster, scheduler) from settings.

Temporary home until chatbot/wiring.py (slack branch) lands on main; then these move there.
"""

from __future__ import annotations

from typing import Literal

from chatbot.daily import DailyPoster, SlackMessage, daily_web_client
from chatbot.library import Library
from chatbot.model import Entry
from chatbot.scheduler import DailyScheduler
from chatbot.settings import Settings
from chatbot.slack.blocks import render_entry_card
from chatbot.store import SqlStore

DAILY_HEADER = {"zh": "今日 PR", "en": "PR of the day"}


def daily_card(entry: Entry, lang: Literal["zh", "en"]) -> SlackMessage:
    """The PR-of-the-day post: the full entry card under a "PR of the day" header."""
    card = render_entry_card(entry, lang, header=DAILY_HEADER[lang])
    return SlackMessage(card["text"], card["blocks"])


def build_store(settings: Settings) -> SqlStore:
    return SqlStore.open(settings.database_url)


def build_daily_poster(settings: Settings, library: Library, store: SqlStore | None = None) -> DailyPoster:
    def entries() -> list[Entry]:
        library.refresh()
        return library.entries

    return DailyPoster(
        store or build_store(settings),
        entries,
        daily_web_client(settings.slack_bot_token, settings.slack_api_url),
        lambda entry: daily_card(entry, settings.language),
    )


def build_daily_scheduler(settings: Settings, poster: DailyPoster) -> DailyScheduler:
    return DailyScheduler(
        poster.run, settings.daily_channels, settings.daily_cron, settings.zone, settings.daily_grace
    )
