"""Escaping and truncation for Slack text: the one module every Block Kit builder uses.

Slack treats `&`, `<` and `>` as control characters: `<!channel>`, `<@U123>` and `<url|label>`
are markup. Every piece of user or curator text goes through `escape()` so nobody can make the
bot mention a channel or a person; only the builders write markup, through `link()`. Escaping
also drops what typed text loses (`chatbot.text.visible_text`): controls, and the bidi
embeddings, overrides and isolates (U+202A–202E, U+2066–2069) that would reorder what people
read, so a curator's title or note shows as written. A link's label never looks like another
address than the one it opens (`link`).
Truncation cuts at a limit with "…" and never inside an `&amp;` entity.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote

from chatbot.text import visible_text
from chatbot.text.links import looks_like_an_address

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
    """Text with Slack's three control characters replaced by entities (and without controls and
    bidi overrides)."""
    return visible_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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
    """A mrkdwn link whose label is escaped and cut; the URL is ours (from the digest). A label
    that reads like an address (a URL, a domain) shows the link's own URL instead, so no label
    says one place and opens another."""
    safe_url = escape(encoded_url(url) or quote(url, safe=_URL_SAFE))
    shown = url if looks_like_an_address(label) else label
    return f"<{safe_url}|{clip(shown, limit)}>"


MAX_BUTTON_URL = 3000
# What may stay as written in a URL: RFC 3986's reserved and unreserved characters, and `%` of an
# escape already there; `<`, `>`, `|`, `"`, spaces and anything non-ASCII are percent-encoded.
_URL_SAFE = ":/?#[]@!$&'()*+,;=%-._~"


def encoded_url(url: str) -> str | None:
    """A URL as a button may carry it: percent-encoded where Slack would refuse it, None when it
    is not an http(s) URL or longer than Slack's 3000 characters (no button then)."""
    encoded = quote(url.strip(), safe=_URL_SAFE)
    if not encoded.lower().startswith(("https://", "http://")) or len(encoded) > MAX_BUTTON_URL:
        return None
    return encoded


def one_line(text: str) -> str:
    """Collapse newlines so a piece fits on one mrkdwn line."""
    return " ".join(text.split())
