"""Slack's markup in what people type: `<@U123>`, `<@U123|Ann Lee>`, `<#C123|general>`, `<!here>`.

A label after `|` is the display name and may hold spaces (`<@U123|Ann Lee>`), so the markup
runs to the next `>` — anything but `<` or `>` inside; stopping at whitespace would leave
`Lee>` in the question.

Slack also sends what people type with `&`, `<` and `>` as `&amp;`, `&lt;` and `&gt;`
(commands, messages, mentions): `typed_text` turns the text Slack sends back into what was
typed, so a search or a question sees `<b>` and an answer that quotes it, escaped once on the
way out, shows `<b>` rather than `&lt;b&gt;`.
"""

from __future__ import annotations

import re

SLACK_MARKUP = re.compile(r"<[@#!][^<>]*>")
# An emoji as Slack and GitHub type it (`:warning:`, `:white_check_mark:`): a marker, not words.
EMOJI_SHORTCODE = re.compile(r"(?<![\w:/]):(?=[a-z0-9_+-]*[a-z])[a-z0-9_+-]{2,40}:(?![\w/])")
# A link as Slack sends it, `<https://…>` or `<https://…|label>`: read as its URL (a PR's URL
# names it; the label is whatever the sender chose).
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^<>|\s]*)(?:\|[^<>]*)?>", re.I)
_ENTITY = re.compile(r"&(amp|lt|gt);")
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">"}
# Characters nobody means in a topic or a question, which an answer quoting them would show:
# C0/C1 controls (NUL, BEL, …; tab, newline and carriage return stay) become a space, and the
# bidi embeddings, overrides and isolates (U+202A–202E, U+2066–2069) that can turn the quoted
# text and the bot's words around it backwards are dropped, and so are the invisible zero-width
# space, word joiner and byte order mark (U+200B, U+2060, U+FEFF) that make `help` a topic.
# The zero-width joiner stays: emoji sequences need it.
_UNSEEN: dict[int, str | None] = {
    code: " " for code in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0))
}
_UNSEEN.update(dict.fromkeys((*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200B, 0x2060, 0xFEFF)))


def without_shortcodes(text: str) -> str:
    """The text without emoji shortcodes, which a note pasted from Slack keeps as markers."""
    return EMOJI_SHORTCODE.sub("", text) if ":" in text else text


def strip_slack_markup(text: str) -> str:
    """The text with each mention, channel link and special mention replaced by a space."""
    return SLACK_MARKUP.sub(" ", text)


def unescape_slack(text: str) -> str:
    """Slack's three entities decoded, in one pass (`&amp;lt;` is the typed `&lt;`)."""
    return _ENTITY.sub(lambda m: _ENTITIES[m[1]], text) if "&" in text else text


def visible_text(text: str) -> str:
    """The text without controls (each a space) and bidi overrides: what an answer may quote
    of a field Slack sends raw (a search box's value)."""
    return text if text.isprintable() else text.translate(_UNSEEN)


def typed_text(text: str) -> str:
    """What a person typed, from the text Slack sends: markup out (mentions, channel links,
    `<!here>`), links as their URL, controls and bidi overrides out, entities decoded."""
    text = visible_text(text)
    if "<" in text:
        text = _SLACK_LINK.sub(r"\1", strip_slack_markup(text))
    return unescape_slack(text)
