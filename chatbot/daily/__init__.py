"""The PR of the day: the picker (core: digest only). Its adapters, the poster
(`chatbot.daily.poster`: store, Slack) and the scheduler (`chatbot.daily.scheduler`: APScheduler), are
imported from their modules, so importing the picker never pulls in an adapter.
"""

from __future__ import annotations

from chatbot.daily.picker import PastPost, Pick, TopicFilter, pick_entry

__all__ = ["PastPost", "Pick", "TopicFilter", "pick_entry"]
