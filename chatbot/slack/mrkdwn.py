"""Escaping and truncation for Slack text: the one module every Block Kit builder uses.

Slack treats `&`, `<` and `>` as control characters: `<!channel>`, `<@U123>` and `<url|label>`
are markup. Every piece of user or curator text goes through `escape()` so nobody can make the
bot mention a channel or a person; only the builders write markup, through `link()`.
Truncation cuts at a limit with "…" and never inside an `&amp;` entity.
"""

from __future__ import annotations

from functools import lru_cache

ELLIPSIS = "…"

# Block Kit limits (https://api.slack.com/reference/block-kit).
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_CONTEXT_TEXT = 2000
MAX_FALLBACK_TEXT = 3000

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape(text: str) -> str:
    """Text with Slack's three control characters replaced by entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters; a cut text ends with "…" and keeps its entities and its
    `<url|label>` links whole (a link cut in half shows its raw markup and unbalances the rest)."""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - len(ELLIPSIS), 0)]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    if cut.rfind("<") > cut.rfind(">"):
        cut = cut[: cut.rfind("<")]
    return cut + ELLIPSIS


def clip(text: str, limit: int) -> str:
    """Escape then truncate: the usual treatment of a piece of user or curator text."""
    return truncate(escape(text), limit)


@lru_cache(maxsize=4096)
def clip_line(text: str, limit: int) -> str:
    """`clip(one_line(text), limit)`, cached: button labels and matched terms recur in every
    answer, and each one costs five string passes (bench/http.py)."""
    return clip(one_line(text), limit)


def link(url: str, label: str, limit: int = 500) -> str:
    """A mrkdwn link whose label is escaped and cut; the URL is ours (from the digest)."""
    safe_url = escape(url).replace("|", "%7C")
    return f"<{safe_url}|{clip(label, limit)}>"


def one_line(text: str) -> str:
    """Collapse newlines so a piece fits on one mrkdwn line."""
    return " ".join(text.split())
