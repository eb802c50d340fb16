"""Core: text facts every part needs the same way (which characters are Chinese, what Slack's
mention markup looks like). Imports nothing but the standard library.

`chatbot.search.tokens` builds its tokens on these; intents, answers, the model prompt and the
Slack follow-ups ask the same questions of text through them, so no two parts disagree.
"""

from chatbot.text.han import HAN_CHAR, HAN_RANGES, HAN_RUN, han_class, has_han
from chatbot.text.mentions import SLACK_MARKUP, strip_slack_markup

__all__ = ["HAN_CHAR", "HAN_RANGES", "HAN_RUN", "SLACK_MARKUP", "han_class", "has_han", "strip_slack_markup"]
