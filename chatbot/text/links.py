"""Addresses in text: URLs and bare domains, which Slack clients turn into links by themselves.

A model answer may name only the addresses its sources hold (`chatbot.answers.grounding`), and a
link's label must not read like an address other than the one it opens (`chatbot.slack.mrkdwn`):
both ask this module what looks like an address, so they agree. "Domain-like" is broad on
purpose (`slack-login-verify.com`, `www.example.org`, `config.yaml`): a code name that happens to
look like one is in the note the answer comes from, or the answer falls back to the note's words.
"""

from __future__ import annotations

import re

# scheme://… (http, https, ftp, slack, …) up to a space or Slack's markup characters.
SCHEME_URL = re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s<>|\"'`]+", re.I)
# label.label…tld: ASCII labels, an alphabetic TLD (or punycode), not inside a longer word; a Han
# character before it does not hide it ("访问slack-login-verify.com").
DOMAIN_LIKE = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,24}|xn--[a-z0-9-]{2,59})"
    r"(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])",
    re.I,
)


# Top-level domains a reader takes for a web address at a glance. A label is judged by these,
# not by every domain-like token: `torch.compile` or `setup.py` in a PR title is a code name.
WEB_TLDS = frozenset(
    [
        "com",
        "net",
        "org",
        "io",
        "ai",
        "dev",
        "app",
        "co",
        "me",
        "info",
        "xyz",
        "site",
        "online",
        "link",
        "example",
        "cn",
        "uk",
        "de",
        "ru",
        "jp",
        "gg",
        "tv",
        "us",
        "cc",
        "biz",
        "page",
        "cloud",
        "tech",
        "top",
        "club",
        "live",
        "news",
        "edu",
        "gov",
        "eu",
        "fr",
        "in",
        "ly",
    ]
)


def looks_like_an_address(text: str) -> bool:
    """Whether a label holds a URL, a `www.` name or a domain on a web TLD (`evil.example`,
    `slack-login-verify.com`) that a reader would take for where the link goes."""
    if SCHEME_URL.search(text):
        return True
    for match in DOMAIN_LIKE.finditer(text):
        token = match.group(0).casefold()
        if token.startswith("www.") or token.rsplit(".", 1)[1] in WEB_TLDS:
            return True
    return False
