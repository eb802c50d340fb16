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


# Full-width punctuation of Chinese prose and its NFKC form: replacing a character by its whole
# compatibility decomposition leaves the text's NFKC unchanged, and is far cheaper than NFKC.
_FULL_WIDTH = (("，", ","), ("：", ":"), ("（", "("), ("）", ")"), ("；", ";"), ("！", "!"), ("？", "?"))


# The characters besides ASCII letters that `re.I` matches to an ASCII letter (İ ı ſ K): a text
# without them is matched case-insensitively to ASCII words as its `str.lower()` is, exactly.
FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")


def nfkc(text: str) -> str:
    """`unicodedata.normalize("NFKC", text)`, without normalizing text that needs none: most
    notes are normalized once their full-width punctuation is (a quick check says so)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    for wide, narrow in _FULL_WIDTH:
        if wide in text:
            text = text.replace(wide, narrow)
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def normalize(text: str) -> str:
    """NFKC and casefold: full-width letters, ligatures and case never decide a match."""
    return nfkc(text).casefold()


def normalize_question(text: str) -> str:
    """NFKC (full-width ？ and letters), casefold, one space between words."""
    return _SPACES.sub(" ", nfkc(text)).strip().casefold()


# Only the inflections (plural, past, -ing): for looking a word up in a list of dictionary words
# ("crashed" → crash, "strategies" → strategy), where "caching" → "cach" would find nothing.
INFLECTIONS = ("ies", "ied", "ing", "ed", "es", "s")


def _by_last_letter(suffixes: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """The suffixes by their last letter, in their order: a word is tried only against those
    it can end with (the first that fits is the same)."""
    groups: dict[str, tuple[str, ...]] = {}
    for suffix in suffixes:
        groups[suffix[-1]] = (*groups.get(suffix[-1], ()), suffix)
    return groups


_SUFFIXES_BY_LAST = _by_last_letter(_SUFFIXES)


def stem(word: str, suffixes: tuple[str, ...] = _SUFFIXES) -> str:
    """A deliberately small stemmer: enough that plural/verb forms meet, never below 3 letters.

    Search stems every word with all the suffixes, so both sides of a match are cut alike; a
    lookup in a word list strips only `INFLECTIONS`."""
    if not word.isalpha() or len(word) <= 3:
        return word
    if suffixes is _SUFFIXES:  # the search's stemmer: many distinct words in an index build
        suffixes = _SUFFIXES_BY_LAST.get(word[-1], ())
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
