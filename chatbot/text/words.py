"""Words of either language, cut the same way everywhere: normalising, stemming, Chinese bigrams.

Search tokens (`chatbot.search.tokens`), follow-up intents and the clause ranker of the answers
all read words through these, so "caching" meets "cache" and 前缀缓存 gives the same bigrams in
a query, a note and a follow-up question.
"""

from __future__ import annotations

import re
import unicodedata

# A Latin word of normalised text: letters and digits, with + and - inside ("c++", "re-export").
LATIN_WORD = re.compile(r"[a-z0-9][a-z0-9+\-]*")
_SPACES = re.compile(r"\s+")

_SUFFIXES = (
    "ations",
    "ation",
    "ating",
    "ated",
    "ates",
    "ings",
    "ions",
    "ing",
    "ion",
    "ies",
    "ied",
    "ers",
    "ate",
    "ly",
    "er",
    "es",
    "ed",
    "s",
    "e",
)


def normalize(text: str) -> str:
    """NFKC and casefold: full-width letters, ligatures and case never decide a match."""
    return unicodedata.normalize("NFKC", text).casefold()


def normalize_question(text: str) -> str:
    """NFKC (full-width ？ and letters), casefold, one space between words."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


# Only the inflections (plural, past, -ing): for looking a word up in a list of dictionary words
# ("crashed" → crash, "strategies" → strategy), where "caching" → "cach" would find nothing.
INFLECTIONS = ("ies", "ied", "ing", "ed", "es", "s")


def stem(word: str, suffixes: tuple[str, ...] = _SUFFIXES) -> str:
    """A deliberately small stemmer: enough that plural/verb forms meet, never below 3 letters.

    Search stems every word with all the suffixes, so both sides of a match are cut alike; a
    lookup in a word list strips only `INFLECTIONS`."""
    if not word.isalpha() or len(word) <= 3:
        return word
    for suffix in suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                continue
            base = word[: -len(suffix)]
            if suffix in {"ies", "ied"}:
                base += "y"
            return base
    return word


def han_bigrams(run: str) -> list[str]:
    """The character bigrams of a run of Chinese; a one-character run is its own unigram."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]
