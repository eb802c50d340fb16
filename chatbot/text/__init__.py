"""Core: text facts every part needs the same way (which characters are Chinese, what Slack's
mention markup looks like, how words are normalised, stemmed and cut into Chinese bigrams).
Imports nothing but the standard library.

`chatbot.search.tokens` builds its tokens on these; intents, answers, the model prompt and the
Slack follow-ups ask the same questions of text through them, so no two parts disagree.
"""

from chatbot.text.han import HAN_CHAR, HAN_RANGES, HAN_RUN, han_class, has_han
from chatbot.text.mentions import (
    EMOJI_SHORTCODE,
    SLACK_MARKUP,
    strip_slack_markup,
    typed_text,
    unescape_slack,
    visible_text,
    without_shortcodes,
)
from chatbot.text.once import once, one_answer
from chatbot.text.words import (
    FOLDS_TO_ASCII,
    INFLECTIONS,
    LATIN_WORD,
    han_bigrams,
    nfkc,
    normalize,
    normalize_question,
    stem,
)

__all__ = [
    "EMOJI_SHORTCODE",
    "FOLDS_TO_ASCII",
    "HAN_CHAR",
    "HAN_RANGES",
    "HAN_RUN",
    "INFLECTIONS",
    "LATIN_WORD",
    "SLACK_MARKUP",
    "han_bigrams",
    "han_class",
    "has_han",
    "nfkc",
    "normalize",
    "normalize_question",
    "once",
    "one_answer",
    "stem",
    "strip_slack_markup",
    "typed_text",
    "unescape_slack",
    "visible_text",
    "without_shortcodes",
]
