"""The PR of the day: the picker (core: digest only) and its adapters, the poster and the scheduler.

The picker is imported eagerly; the poster (store, Slack) and scheduler (APScheduler) load on first use,
so importing the picker never pulls in an adapter.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chatbot.daily.picker import PastPost, Pick, TopicFilter, pick_entry

if TYPE_CHECKING:
    from chatbot.daily.poster import (
        DAILY_EVENT_TYPE,
        DailyPoster,
        DailyResult,
        SlackMessage,
        Status,
    )
    from chatbot.daily.scheduler import DailyScheduler

_LAZY = {
    "DAILY_EVENT_TYPE": "chatbot.daily.poster",
    "DailyPoster": "chatbot.daily.poster",
    "DailyResult": "chatbot.daily.poster",
    "SlackMessage": "chatbot.daily.poster",
    "Status": "chatbot.daily.poster",
    "DailyScheduler": "chatbot.daily.scheduler",
}

__all__ = [
    "DAILY_EVENT_TYPE",
    "DailyPoster",
    "DailyResult",
    "DailyScheduler",
    "PastPost",
    "Pick",
    "SlackMessage",
    "Status",
    "TopicFilter",
    "pick_entry",
]


def __getattr__(name: str) -> Any:
    """Load an adapter name on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chatbot.daily' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
