"""Builders for the daily post (store, poster, scheduler) from settings.

Temporary home until chatbot/wiring.py (slack branch) lands on main; then these move there.
"""

from __future__ import annotations

from chatbot.daily import DailyPoster, SlackMessage, daily_web_client
from chatbot.library import Library
from chatbot.model import Entry
from chatbot.scheduler import DailyScheduler
from chatbot.settings import Settings
from chatbot.store import SqlStore

DAILY_HEADER = {"zh": "今日 PR", "en": "PR of the day"}


def plain_daily_message(entry: Entry, lang: str) -> SlackMessage:
    """Stand-in for render_entry_card until the Slack rendering lands."""
    header = DAILY_HEADER.get(lang, DAILY_HEADER["en"])
    link = f"<{entry.url}|#{entry.pr}> " if entry.url and entry.pr else ""
    text = f"{header}: {entry.title}"
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": header}},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{link}{entry.title}*\n{entry.why or ''}"}},
    ]
    return SlackMessage(text, blocks)


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
        lambda entry: plain_daily_message(entry, settings.language),
    )


def build_daily_scheduler(settings: Settings, poster: DailyPoster) -> DailyScheduler:
    return DailyScheduler(
        poster.run, settings.daily_channels, settings.daily_cron, settings.zone, settings.daily_grace
    )
