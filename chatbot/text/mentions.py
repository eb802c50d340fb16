"""Slack's markup in what people type: `<@U123>`, `<@U123|Ann Lee>`, `<#C123|general>`, `<!here>`.

A label after `|` is the display name and may hold spaces (`<@U123|Ann Lee>`), so the markup
runs to the next `>` — anything but `<` or `>` inside; stopping at whitespace would leave
`Lee>` in the question.
"""

from __future__ import annotations

import re

SLACK_MARKUP = re.compile(r"<[@#!][^<>]*>")


def strip_slack_markup(text: str) -> str:
    """The text with each mention, channel link and special mention replaced by a space."""
    return SLACK_MARKUP.sub(" ", text)
