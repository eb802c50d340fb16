"""What usage keeps of people's words and names: normalised text, salted hashes, no user ids.

`normalise` makes "Spec  Decode?" and "spec decode" one query, so the curator sees a gap once
with its count, and strips Slack markup (mentions, links) and anything that looks like a token.
`voter_hash` turns a Slack user id into an HMAC under a secret the replicas share (USAGE_SALT,
else derived from the bot token), so a second vote replaces the first without the store ever
holding the id.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata

from chatbot.observability.logs import redact

# <@U123>, <#C123|name>, <!here>, <https://…|label>: Slack markup in what people type.
_MARKUP = re.compile(r"<[^<>]*>")
# What is left of markup that never closes (`<@` typed alone): its `<` goes, so no mention's
# opening is kept, and none is made by what is removed around it.
_UNCLOSED = re.compile(r"<(?=[@!#])")
# Punctuation at either end carries no meaning for a topic ("compile?", "「投机解码」").
_PUNCT = r"\s?!.,;:。？！，、；：…「」『』“”‘’\"'()（）\[\]【】"
_EDGE = re.compile(rf"^[{_PUNCT}]+|[{_PUNCT}]+$")


def normalise(text: str, limit: int = 200) -> str:
    """NFKC, case-folded, markup and secrets removed, whitespace collapsed, edge punctuation cut;
    again until nothing changes (removing `<>` from `<<>>` leaves `< >`, itself markup)."""
    once = _normalise_once(text, limit)
    for _ in range(8):
        again = _normalise_once(once, limit)
        if again == once:
            break
        once = again
    return once


def _normalise_once(text: str, limit: int) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _UNCLOSED.sub(" ", _MARKUP.sub(" ", text))
    text = redact(text)
    text = " ".join(text.casefold().split())
    return _EDGE.sub("", text)[:limit].strip()


def salt_key(salt: str | None, fallback_secret: str) -> bytes:
    """The HMAC key: USAGE_SALT when set, else one derived from a secret every replica has."""
    material = salt if salt else f"vllm-digest usage:{fallback_secret}"
    return hashlib.sha256(material.encode()).digest()


def voter_hash(key: bytes, user_id: str) -> str:
    """A stable pseudonym of a Slack user id: same person, same hash; the id is not recoverable
    without the key."""
    return hmac.new(key, user_id.encode(), hashlib.sha256).hexdigest()
